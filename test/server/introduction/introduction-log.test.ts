/**
 * The throttled log of client introduction violations (FakeClock): 10,000 registrations without
 * a token in a minute log the first INTRODUCTION_LOG_BURST in full, then one line with the count
 * of those left out when the window ends; each message has its own window; every violation is
 * counted; close() logs what an open window left out; a quiet log leaves no timer behind.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { INTRODUCTION_LOG_BURST, INTRODUCTION_LOG_WINDOW_MS, IntroductionLog, type IntroductionLogLine, type IntroductionLogSink } from '../../../src/server/introduction/introduction-log.js';
import { FakeClock } from '../../../src/time/clock.js';

interface Logged {
  level: 'warn' | 'error';
  message: string;
  fields: Record<string, string | number>;
}

function recorder(): { sink: IntroductionLogSink; lines: Logged[] } {
  const lines: Logged[] = [];
  return {
    lines,
    sink: {
      warn: (fields, message) => lines.push({ level: 'warn', message, fields }),
      error: (fields, message) => lines.push({ level: 'error', message, fields }),
    },
  };
}

const NO_TOKEN = 'node registration without introduction token';
const line = (i: number, level: 'warn' | 'error' = 'warn', message = NO_TOKEN): IntroductionLogLine => ({
  level,
  message,
  fields: { enforcement_level: level === 'warn' ? 'warn' : 'strict', node_id: `node-${i}`, node_pool: 'default', node_name: `n${i}` },
});

describe('introduction log', () => {
  it('10,000 registrations without a token in a minute: the first burst in full, then one line with the count', () => {
    const clock = new FakeClock();
    const { sink, lines } = recorder();
    const log = new IntroductionLog(() => sink, clock);
    for (let i = 0; i < 10_000; i++) {
      log.record(line(i));
      clock.advance(5); // 10,000 in 50 s
    }
    assert.equal(lines.length, INTRODUCTION_LOG_BURST, 'only the burst is logged while the window is open');
    assert.deepEqual(lines.map((l) => l.fields['node_id']), Array.from({ length: INTRODUCTION_LOG_BURST }, (_, i) => `node-${i}`));
    assert.ok(lines.every((l) => l.level === 'warn' && l.message === NO_TOKEN), "Nomad's level and message");

    clock.advance(INTRODUCTION_LOG_WINDOW_MS);
    assert.equal(lines.length, INTRODUCTION_LOG_BURST + 1);
    const summary = lines.at(-1)!;
    assert.equal(summary.level, 'warn');
    assert.equal(summary.fields['suppressed'], 10_000 - INTRODUCTION_LOG_BURST);
    assert.equal(summary.fields['node_id'], 'node-9999', 'the fields of the last one');
    assert.match(summary.message, /^node registration without introduction token: 9990 more not logged one by one/);
    assert.equal(log.violations(), 10_000);
    assert.equal(clock.pendingTimers(), 0, 'a closed window leaves no timer');

    // A new window logs in full again.
    log.record(line(10_000));
    assert.equal(lines.at(-1)?.fields['node_id'], 'node-10000');
    assert.equal(lines.at(-1)?.fields['suppressed'], undefined);
  });

  it('each message and level has its own window; a window with nothing left out ends without a line', () => {
    const clock = new FakeClock();
    const { sink, lines } = recorder();
    const log = new IntroductionLog(() => sink, clock, 2, 1_000);
    for (let i = 0; i < 5; i++) log.record(line(i));
    for (let i = 0; i < 3; i++) log.record(line(i, 'error', 'node registration introduction authentication failure'));
    log.record(line(0, 'error'));
    assert.deepEqual(
      lines.map((l) => `${l.level} ${l.message} ${l.fields['node_id']}`),
      [
        `warn ${NO_TOKEN} node-0`,
        `warn ${NO_TOKEN} node-1`,
        'error node registration introduction authentication failure node-0',
        'error node registration introduction authentication failure node-1',
        `error ${NO_TOKEN} node-0`,
      ],
    );
    clock.advance(1_000);
    assert.deepEqual(
      lines.slice(5).map((l) => [l.level, l.fields['suppressed']]),
      [
        ['warn', 3],
        ['error', 1],
      ],
    );
    assert.equal(log.violations(), 9);
  });

  it('close() logs what open windows left out and cancels their timers; without a logger lines are only counted', () => {
    const clock = new FakeClock();
    const { sink, lines } = recorder();
    const log = new IntroductionLog(() => sink, clock, 1, 60_000);
    log.record(line(0));
    log.record(line(1));
    log.close();
    assert.deepEqual(lines.map((l) => l.fields['suppressed']), [undefined, 1]);
    assert.equal(clock.pendingTimers(), 0);

    const silent = new IntroductionLog(() => undefined, clock);
    silent.record(line(0));
    silent.close();
    assert.equal(silent.violations(), 1);
  });
});
