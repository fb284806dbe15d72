/**
 * A small cron parser for periodic jobs: 5 fields (minute hour day-of-month month day-of-week),
 * 6 fields (seconds first) or 7 fields (seconds first, year last), with `*`, `?`, lists, ranges,
 * steps, month/day names and the `@hourly`-style shorthands. `nextCronTime` finds the next
 * launch strictly after an instant in an IANA time zone (via Intl), searching in wall-clock
 * time so daylight-saving shifts never skip a whole day.
 */
import { CaravanError } from '../../structs/caravan-error.js';

/** A cron expression that could not be parsed; the message names the field. */
export class CronSpecError extends CaravanError<'CRON_SPEC_INVALID'> {
  constructor(reason: string) {
    super('CRON_SPEC_INVALID', { reason });
    this.name = 'CronSpecError';
  }
}

/** A parsed cron expression: the allowed values of each field. */
export interface CronSchedule {
  seconds: ReadonlySet<number>;
  minutes: ReadonlySet<number>;
  hours: ReadonlySet<number>;
  daysOfMonth: ReadonlySet<number>;
  months: ReadonlySet<number>;
  /** 0 = Sunday … 6 = Saturday (7 is folded into 0). */
  daysOfWeek: ReadonlySet<number>;
  /** null: every year. */
  years: ReadonlySet<number> | null;
  /** Whether day-of-month / day-of-week were restricted (both restricted → either matches, as cron). */
  domRestricted: boolean;
  dowRestricted: boolean;
}

const SHORTHANDS: Record<string, string> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface FieldDef {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** Offset added to a name's index (months are 1-based). */
  nameBase?: number;
}

const FIELDS = {
  second: { name: 'seconds', min: 0, max: 59 },
  minute: { name: 'minutes', min: 0, max: 59 },
  hour: { name: 'hours', min: 0, max: 23 },
  dom: { name: 'day of month', min: 1, max: 31 },
  month: { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  dow: { name: 'day of week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
  year: { name: 'year', min: 1970, max: 2099 },
} satisfies Record<string, FieldDef>;

/** Parses a cron expression; throws CronSpecError naming the offending field. */
export function parseCron(spec: string): CronSchedule {
  const trimmed = spec.trim();
  if (trimmed === '') throw new CronSpecError('cron expression is empty');
  const expanded = trimmed.startsWith('@') ? SHORTHANDS[trimmed.toLowerCase()] : trimmed;
  if (expanded === undefined) throw new CronSpecError(`unknown cron shorthand ${JSON.stringify(trimmed)}`);
  let parts = expanded.split(/\s+/);
  if (parts.length === 5) parts = ['0', ...parts];
  if (parts.length !== 6 && parts.length !== 7) {
    throw new CronSpecError(`cron expression ${JSON.stringify(spec)} has ${parts.length} fields; want 5, 6 or 7`);
  }
  const [sec, min, hour, dom, month, dow, year] = parts as [string, string, string, string, string, string, string | undefined];
  const dows = parseField(dow, FIELDS.dow);
  if (dows.has(7)) {
    dows.delete(7);
    dows.add(0);
  }
  return {
    seconds: parseField(sec, FIELDS.second),
    minutes: parseField(min, FIELDS.minute),
    hours: parseField(hour, FIELDS.hour),
    daysOfMonth: parseField(dom, FIELDS.dom),
    months: parseField(month, FIELDS.month),
    daysOfWeek: dows,
    years: year === undefined || isWildcard(year) ? null : parseField(year, FIELDS.year),
    domRestricted: !isWildcard(dom),
    dowRestricted: !isWildcard(dow),
  };
}

function isWildcard(field: string): boolean {
  return field === '*' || field === '?';
}

function parseField(text: string, def: FieldDef): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') throw new CronSpecError(`${def.name}: empty list item in ${JSON.stringify(text)}`);
    const [rangePart, stepPart, extra] = item.split('/');
    if (extra !== undefined) throw new CronSpecError(`${def.name}: bad step in ${JSON.stringify(item)}`);
    const step = stepPart === undefined ? 1 : parseNumber(stepPart, def, 'step');
    if (step < 1) throw new CronSpecError(`${def.name}: step must be at least 1 in ${JSON.stringify(item)}`);
    let lo: number;
    let hi: number;
    if (rangePart === '*' || rangePart === '?') {
      lo = def.min;
      hi = def.name === 'day of week' ? 6 : def.max;
    } else if (rangePart!.includes('-')) {
      const [a, b, more] = rangePart!.split('-');
      if (more !== undefined || a === undefined || b === undefined) throw new CronSpecError(`${def.name}: bad range ${JSON.stringify(item)}`);
      lo = parseValue(a, def);
      hi = parseValue(b, def);
      if (lo > hi) throw new CronSpecError(`${def.name}: range start ${lo} is after its end ${hi}`);
    } else {
      lo = parseValue(rangePart!, def);
      // "5/10" means from 5 to the end in steps of 10, as in most crons.
      hi = stepPart === undefined ? lo : def.max;
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

function parseValue(text: string, def: FieldDef): number {
  const lower = text.toLowerCase();
  const named = def.names?.indexOf(lower) ?? -1;
  if (named >= 0) return named + (def.nameBase ?? 0);
  return parseNumber(text, def, 'value');
}

function parseNumber(text: string, def: FieldDef, what: 'value' | 'step'): number {
  if (!/^\d+$/.test(text)) throw new CronSpecError(`${def.name}: invalid ${what} ${JSON.stringify(text)}`);
  const n = Number(text);
  if (what === 'value' && (n < def.min || n > def.max)) {
    throw new CronSpecError(`${def.name}: ${n} is out of range ${def.min}-${def.max}`);
  }
  return n;
}

// ---- time zones ----

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new CronSpecError(`time_zone: unknown time zone ${JSON.stringify(timeZone)}`);
    }
    formatters.set(timeZone, f);
  }
  return f;
}

/** Throws CronSpecError when `timeZone` is not a zone Intl knows. */
export function checkTimeZone(timeZone: string): void {
  formatterFor(timeZone);
}

/** The wall-clock time at instant `ms` in `timeZone`, expressed as if it were UTC milliseconds. */
function wallTime(ms: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const wall = Date.UTC(parts['year']!, parts['month']! - 1, parts['day']!, parts['hour']! % 24, parts['minute']!, parts['second']!);
  return wall + (ms % 1000 + 1000) % 1000;
}

/** The earliest instant whose wall-clock time in `timeZone` is `wall`, or null if it does not exist (DST gap). */
function instantOf(wall: number, timeZone: string): number | null {
  // Offset transitions are months apart, so the offsets a day either side are the only candidates.
  const offsets = new Set([wallTime(wall - 86_400_000, timeZone) - (wall - 86_400_000), wallTime(wall + 86_400_000, timeZone) - (wall + 86_400_000)]);
  let best: number | null = null;
  for (const off of offsets) {
    const t = wall - off;
    if (wallTime(t, timeZone) === wall && (best === null || t < best)) best = t;
  }
  return best;
}

/** How many wall-clock steps the search may take before giving up (e.g. "30 2 * 2 *" never matches Feb 30). */
const SEARCH_LIMIT = 50_000;

/**
 * The next instant (ms) strictly after `afterMs` matching `schedule` in `timeZone`, or null when
 * none exists within the search horizon. Launches fall on whole seconds.
 */
export function nextCronTime(schedule: CronSchedule, afterMs: number, timeZone = 'UTC'): number | null {
  let wall = Math.floor(wallTime(afterMs, timeZone) / 1000) * 1000 + 1000;
  for (let i = 0; i < SEARCH_LIMIT; i++) {
    const d = new Date(wall);
    const y = d.getUTCFullYear();
    const mo = d.getUTCMonth();
    const day = d.getUTCDate();
    const h = d.getUTCHours();
    const mi = d.getUTCMinutes();
    if (schedule.years && !schedule.years.has(y)) {
      if (y > FIELDS.year.max) return null;
      wall = Date.UTC(y + 1, 0, 1);
    } else if (!schedule.months.has(mo + 1)) {
      wall = Date.UTC(y, mo + 1, 1);
    } else if (!dayMatches(schedule, day, d.getUTCDay())) {
      wall = Date.UTC(y, mo, day + 1);
    } else if (!schedule.hours.has(h)) {
      wall = Date.UTC(y, mo, day, h + 1);
    } else if (!schedule.minutes.has(mi)) {
      wall = Date.UTC(y, mo, day, h, mi + 1);
    } else if (!schedule.seconds.has(d.getUTCSeconds())) {
      wall += 1000;
    } else {
      const at = instantOf(wall, timeZone);
      if (at !== null && at > afterMs) return at;
      wall += 1000;
    }
  }
  return null;
}

function dayMatches(s: CronSchedule, dom: number, dow: number): boolean {
  const domOk = s.daysOfMonth.has(dom);
  const dowOk = s.daysOfWeek.has(dow);
  if (s.domRestricted && s.dowRestricted) return domOk || dowOk;
  return domOk && dowOk;
}

/** The next launch of any of `specs` after `afterMs`; null when none of them has one. */
export function nextLaunchOf(specs: readonly string[], afterMs: number, timeZone = 'UTC'): number | null {
  let best: number | null = null;
  for (const spec of specs) {
    const t = nextCronTime(parseCron(spec), afterMs, timeZone);
    if (t !== null && (best === null || t < best)) best = t;
  }
  return best;
}
