/**
 * cty's `timeadd` and `formatdate` over RFC 3339 timestamps. The timestamp's own UTC offset
 * is kept, as Go's time package keeps it. (Nomad's jobspec2 has no `timestamp()`: a job
 * file's value must not change between parses.)
 */
import { DurationParseError, parseDuration } from '../../../structs/duration.js';
import type { HclFunction } from '../expression-evaluator.js';
import { evalError } from '../hcl-eval-error.js';
import { toStr } from '../hcl-value.js';
import { defineFunction } from './define-function.js';

interface Stamp {
  /** Milliseconds since the epoch (UTC). */
  ms: number;
  /** Offset east of UTC in minutes; undefined for "Z". */
  offset: number | undefined;
}

function parseStamp(s: string): Stamp {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) throw evalError(`not a valid RFC3339 timestamp: ${JSON.stringify(s)}`);
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  let offset: number | undefined;
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone!.startsWith('-') ? -1 : 1;
    offset = sign * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  }
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec)) + Math.round(Number(frac ?? 0) * 1000) - (offset ?? 0) * 60_000;
  if (!Number.isFinite(ms)) throw evalError(`not a valid RFC3339 timestamp: ${JSON.stringify(s)}`);
  return { ms, offset };
}

/** The broken-down local time of a stamp (its offset applied). */
function local(st: Stamp): Date {
  return new Date(st.ms + (st.offset ?? 0) * 60_000);
}

const two = (n: number): string => String(n).padStart(2, '0');

function zoneText(offset: number | undefined, colon: boolean): string {
  if (offset === undefined) return 'Z';
  const sign = offset < 0 ? '-' : '+';
  const a = Math.abs(offset);
  return `${sign}${two(Math.floor(a / 60))}${colon ? ':' : ''}${two(a % 60)}`;
}

function rfc3339(st: Stamp): string {
  const t = local(st);
  const base = `${String(t.getUTCFullYear()).padStart(4, '0')}-${two(t.getUTCMonth() + 1)}-${two(t.getUTCDate())}T${two(t.getUTCHours())}:${two(t.getUTCMinutes())}:${two(t.getUTCSeconds())}`;
  return base + zoneText(st.offset, true);
}

function timeadd(stamp: string, duration: string): string {
  const st = parseStamp(stamp);
  let nanos: number;
  try {
    nanos = parseDuration(duration);
  } catch (err) {
    if (err instanceof DurationParseError) throw evalError(`invalid duration ${JSON.stringify(duration)}`);
    throw err;
  }
  return rfc3339({ ms: st.ms + Math.trunc(nanos / 1e6), offset: st.offset });
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function formatdate(spec: string, stamp: string): string {
  const st = parseStamp(stamp);
  const t = local(st);
  const h = t.getUTCHours();
  const tokens: Record<string, () => string> = {
    YYYY: () => String(t.getUTCFullYear()).padStart(4, '0'),
    YY: () => two(t.getUTCFullYear() % 100),
    MMMM: () => MONTHS[t.getUTCMonth()]!,
    MMM: () => MONTHS[t.getUTCMonth()]!.slice(0, 3),
    MM: () => two(t.getUTCMonth() + 1),
    M: () => String(t.getUTCMonth() + 1),
    DD: () => two(t.getUTCDate()),
    D: () => String(t.getUTCDate()),
    EEEE: () => DAYS[t.getUTCDay()]!,
    EEE: () => DAYS[t.getUTCDay()]!.slice(0, 3),
    hh: () => two(h),
    h: () => String(h),
    HH: () => two(h % 12 === 0 ? 12 : h % 12),
    H: () => String(h % 12 === 0 ? 12 : h % 12),
    AA: () => (h < 12 ? 'AM' : 'PM'),
    aa: () => (h < 12 ? 'am' : 'pm'),
    mm: () => two(t.getUTCMinutes()),
    m: () => String(t.getUTCMinutes()),
    ss: () => two(t.getUTCSeconds()),
    s: () => String(t.getUTCSeconds()),
    ZZZZZ: () => zoneText(st.offset ?? 0, true),
    ZZZZ: () => zoneText(st.offset ?? 0, false),
    ZZZ: () => (st.offset === undefined ? 'UTC' : zoneText(st.offset, false)),
    Z: () => zoneText(st.offset, true),
  };
  let out = '';
  let i = 0;
  while (i < spec.length) {
    const c = spec[i]!;
    if (c === "'") {
      // A quoted literal; '' inside it (or alone) is one quote.
      if (spec[i + 1] === "'") {
        out += "'";
        i += 2;
        continue;
      }
      let j = i + 1;
      for (;;) {
        if (j >= spec.length) throw evalError('unterminated literal in the format spec');
        if (spec[j] === "'" && spec[j + 1] === "'") {
          out += "'";
          j += 2;
        } else if (spec[j] === "'") {
          break;
        } else {
          out += spec[j];
          j++;
        }
      }
      i = j + 1;
      continue;
    }
    if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (spec[j] === c) j++;
      const run = spec.slice(i, j);
      const fn = tokens[run];
      if (!fn) throw evalError(`invalid date format verb ${JSON.stringify(run)}`);
      out += fn();
      i = j;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** Time functions by name. */
export const TIME_FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  formatdate: defineFunction(2, 2, ([spec, stamp]) => formatdate(toStr(spec!, 'format'), toStr(stamp!, 'timestamp'))),
  timeadd: defineFunction(2, 2, ([stamp, d]) => timeadd(toStr(stamp!, 'timestamp'), toStr(d!, 'duration'))),
};
