import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CronSpecError, nextCronTime, nextLaunchOf, parseCron } from '../../../src/server/periodic/cron-spec.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const at = (s: string) => Date.parse(s);

describe('cron spec: next launch (UTC)', () => {
  const cases: Array<[spec: string, after: string, want: string | null]> = [
    ['* * * * *', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00.000Z'],
    ['* * * * *', '2026-01-01T00:00:30Z', '2026-01-01T00:01:00.000Z'],
    ['* * * * * *', '2026-01-01T00:00:30.500Z', '2026-01-01T00:00:31.000Z'],
    ['*/15 * * * *', '2026-01-01T00:01:00Z', '2026-01-01T00:15:00.000Z'],
    ['0 9-17/4 * * *', '2026-01-01T10:00:00Z', '2026-01-01T13:00:00.000Z'],
    ['30 2 * * *', '2026-01-01T02:30:00Z', '2026-01-02T02:30:00.000Z'],
    ['0 0 1,15 * *', '2026-01-02T00:00:00Z', '2026-01-15T00:00:00.000Z'],
    ['0 0 * * MON', '2026-01-01T00:00:00Z', '2026-01-05T00:00:00.000Z'], // 2026-01-01 is a Thursday
    ['0 0 * * 7', '2026-01-01T00:00:00Z', '2026-01-04T00:00:00.000Z'], // 7 is Sunday too
    ['0 0 1 * 1', '2026-01-01T00:00:00Z', '2026-01-05T00:00:00.000Z'], // dom OR dow when both restricted
    ['0 0 29 FEB *', '2026-01-01T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['5/20 * * * * *', '2026-01-01T00:00:06Z', '2026-01-01T00:00:25.000Z'],
    ['0 0 12 * * * 2027', '2026-06-01T00:00:00Z', '2027-01-01T12:00:00.000Z'],
    ['@hourly', '2026-01-01T10:10:00Z', '2026-01-01T11:00:00.000Z'],
    ['@daily', '2026-01-01T10:10:00Z', '2026-01-02T00:00:00.000Z'],
    ['@weekly', '2026-01-01T10:10:00Z', '2026-01-04T00:00:00.000Z'],
    ['@monthly', '2026-01-01T10:10:00Z', '2026-02-01T00:00:00.000Z'],
    ['@yearly', '2026-01-01T10:10:00Z', '2027-01-01T00:00:00.000Z'],
    ['0 0 30 2 *', '2026-01-01T00:00:00Z', null], // February 30th never comes
  ];
  for (const [spec, after, want] of cases) {
    it(`${spec} after ${after} → ${want}`, () => {
      assert.equal(iso(nextCronTime(parseCron(spec), at(after))), want);
    });
  }
});

describe('cron spec: time zones', () => {
  it('runs at local wall-clock time', () => {
    // 09:00 in New York in January is 14:00 UTC (EST, UTC-5).
    assert.equal(iso(nextCronTime(parseCron('0 9 * * *'), at('2026-01-10T00:00:00Z'), 'America/New_York')), '2026-01-10T14:00:00.000Z');
    // In July (EDT, UTC-4) it is 13:00 UTC.
    assert.equal(iso(nextCronTime(parseCron('0 9 * * *'), at('2026-07-10T00:00:00Z'), 'America/New_York')), '2026-07-10T13:00:00.000Z');
  });

  it('skips a wall-clock time that does not exist on a spring-forward day', () => {
    // 2026-03-08 02:30 does not exist in New York; the next 02:30 is on March 9th (EDT).
    assert.equal(iso(nextCronTime(parseCron('30 2 * * *'), at('2026-03-08T05:00:00Z'), 'America/New_York')), '2026-03-09T06:30:00.000Z');
  });

  it('does not lose midnight after a short day', () => {
    // Sunday 2026-03-08 has 23 hours in New York; Monday midnight is still found.
    assert.equal(iso(nextCronTime(parseCron('0 0 * * MON'), at('2026-03-08T04:59:00Z'), 'America/New_York')), '2026-03-09T04:00:00.000Z');
  });

  it('rejects an unknown zone naming time_zone', () => {
    assert.throws(() => nextCronTime(parseCron('* * * * *'), 0, 'Mars/Olympus'), (e: unknown) => e instanceof CronSpecError && /time_zone/.test(e.message));
  });
});

describe('cron spec: parse errors name the field', () => {
  const bad: Array<[string, RegExp]> = [
    ['', /empty/],
    ['* * *', /3 fields/],
    ['61 * * * *', /minutes: 61 is out of range/],
    ['* 24 * * *', /hours/],
    ['* * 0 * *', /day of month/],
    ['* * * 13 *', /month/],
    ['* * * * 8', /day of week/],
    ['*/0 * * * *', /step/],
    ['5-1 * * * *', /range start/],
    ['a * * * *', /minutes: invalid value/],
    ['@fortnightly', /unknown cron shorthand/],
  ];
  for (const [spec, re] of bad) {
    it(JSON.stringify(spec), () => {
      assert.throws(() => parseCron(spec), (e: unknown) => e instanceof CronSpecError && e.code === 'CRON_SPEC_INVALID' && re.test(e.message));
    });
  }
});

describe('cron spec: several specs', () => {
  it('takes the earliest next launch', () => {
    assert.equal(iso(nextLaunchOf(['0 12 * * *', '0 6 * * *'], at('2026-01-01T00:00:00Z'))), '2026-01-01T06:00:00.000Z');
  });
});
