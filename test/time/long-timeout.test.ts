import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { MAX_TIMEOUT_MS, setLongTimeout } from '../../src/time/long-timeout.js';
import { FakeClock, systemClock } from '../../src/time/clock.js';
import { LONG_MS, pause } from './real-timers.js';

/** Collects process warnings (TimeoutOverflowWarning) emitted while fn runs. */
async function warningsDuring(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const on = (w: Error): void => void seen.push(w.name);
  process.on('warning', on);
  try {
    await fn();
    await pause(10);
  } finally {
    process.off('warning', on);
  }
  return seen;
}

test('long timeout: chained timers fire once the whole delay has passed, never before', async () => {
  const t0 = performance.now();
  let firedAt = -1;
  let fires = 0;
  // A 20 ms chunk stands in for Node's 2^31−1 ms limit: 120 ms takes several chained timers.
  setLongTimeout(() => {
    fires++;
    firedAt = performance.now() - t0;
  }, 120, 20);
  await pause(80);
  assert.equal(fires, 0, 'fired early');
  await pause(150);
  assert.equal(fires, 1);
  assert.ok(firedAt >= 120, `fired after ${firedAt} ms`);
});

test('long timeout: never calls back synchronously, even for 0 ms, and cancel before the turn prevents it', async () => {
  let calls = 0;
  setLongTimeout(() => calls++, 0);
  setLongTimeout(() => calls++, -5);
  assert.equal(calls, 0, 'called back inside setLongTimeout');
  const t = setLongTimeout(() => calls++, 0);
  t.cancel();
  await pause(20);
  assert.equal(calls, 2);
});

test('system clock: a 0 ms timer re-armed from its own callback is cancelled by its last handle', async () => {
  // The stats hook's pattern: tick() re-arms and stores its timer; cancel() must reach the newest.
  let timer: { cancel(): void } | null = null;
  let ticks = 0;
  const tick = (): void => {
    ticks++;
    timer = systemClock.setTimer(5, tick);
  };
  timer = systemClock.setTimer(0, tick);
  await pause(30);
  timer.cancel();
  const at = ticks;
  await pause(40);
  assert.equal(ticks, at, 'the timer kept ticking after cancel');
});

test('long timeout: cancel stops a chain between links', async () => {
  let fired = false;
  const t = setLongTimeout(() => (fired = true), 60, 20);
  await pause(30);
  t.cancel();
  await pause(80);
  assert.equal(fired, false);
});

test('system clock: a timer past 2^31−1 ms neither fires at once nor warns', async () => {
  let fired = false;
  const warnings = await warningsDuring(async () => {
    const t = systemClock.setTimer(MAX_TIMEOUT_MS + 5_000, () => (fired = true));
    const t2 = systemClock.setTimer(LONG_MS, () => (fired = true));
    await pause(150);
    t.cancel();
    t2.cancel();
  });
  assert.equal(fired, false, 'a 24.8-day+ timer fired within 150 ms');
  assert.deepEqual(warnings, []);
});

test('system clock: a sleep past 2^31−1 ms stays asleep and is abortable', async () => {
  const ac = new AbortController();
  let woke = false;
  const p = systemClock.sleep(LONG_MS, ac.signal).then(() => (woke = true));
  await pause(150);
  assert.equal(woke, false);
  ac.abort(new Error('stop'));
  await assert.rejects(p, /stop/);
});

test('fake clock: a timer past 2^31−1 ms fires at its time, not before', () => {
  const clock = new FakeClock();
  let fired = 0;
  clock.setTimer(LONG_MS, () => fired++);
  clock.advance(LONG_MS - 1);
  assert.equal(fired, 0);
  clock.advance(1);
  assert.equal(fired, 1);
});
