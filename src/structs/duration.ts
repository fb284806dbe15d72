/**
 * Durations as Nomad carries them on the wire: integer nanoseconds.
 * Parsing accepts Go duration strings ("15s", "1h30m", "250ms", "1.5h").
 */
import { CaravanError } from './caravan-error.js';

/** A duration in integer nanoseconds, as in Nomad's API JSON. */
export type Nanos = number;

export const NANOS_PER_MS = 1_000_000;
export const NANOS_PER_SECOND = 1_000_000_000;

const UNITS: Record<string, number> = {
  ns: 1,
  us: 1_000,
  'µs': 1_000,
  'μs': 1_000,
  ms: 1_000_000,
  s: 1_000_000_000,
  m: 60_000_000_000,
  h: 3_600_000_000_000,
};

/** Error thrown when a duration string is malformed; `value` is the offending input. */
export class DurationParseError extends CaravanError<'DURATION_INVALID'> {
  constructor(readonly value: string) {
    super('DURATION_INVALID', { value });
    this.name = 'DurationParseError';
  }
}

/** Parses a Go duration string into nanoseconds; throws DurationParseError when malformed. */
export function parseDuration(input: string): Nanos {
  const s = input.trim();
  if (s === '0') return 0;
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '') throw new DurationParseError(input);
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (rest.length > 0) {
    const m = re.exec(rest);
    if (!m) throw new DurationParseError(input);
    total += Number(m[1]) * UNITS[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return sign * Math.round(total);
}

/** Formats nanoseconds as a Go-style duration string ("1h30m0s", "15s", "250ms"). */
export function formatDuration(ns: Nanos): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let n = Math.abs(ns);
  let out: string;
  if (n < NANOS_PER_SECOND) {
    if (n < 1_000) out = `${n}ns`;
    else if (n < NANOS_PER_MS) out = `${trim(n / 1_000)}µs`;
    else out = `${trim(n / NANOS_PER_MS)}ms`;
  } else {
    const h = Math.floor(n / 3_600_000_000_000);
    n -= h * 3_600_000_000_000;
    const m = Math.floor(n / 60_000_000_000);
    n -= m * 60_000_000_000;
    const sec = trim(n / NANOS_PER_SECOND);
    out = h > 0 ? `${h}h${m}m${sec}s` : m > 0 ? `${m}m${sec}s` : `${sec}s`;
  }
  return neg ? `-${out}` : out;
}

function trim(x: number): string {
  return String(Number(x.toFixed(9)));
}

/** Milliseconds → nanoseconds. */
export function msToNanos(ms: number): Nanos {
  return Math.round(ms * NANOS_PER_MS);
}

/** Nanoseconds → milliseconds. */
export function nanosToMs(ns: Nanos): number {
  return ns / NANOS_PER_MS;
}
