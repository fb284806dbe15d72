/**
 * Every family of long timers (periodic launches, delayed evaluations and reschedule delays,
 * heartbeat TTLs; deployment deadlines are in deployment-watcher.test.ts) with delays past
 * Node.js's 2^31−1 ms limit: at their time on the FakeClock, and not early with real timers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Job } from '../../src/structs/index.js';
import type { StateReader } from '../../src/server/state/state-reader.js';
import { PeriodicDispatcher } from '../../src/server/periodic/periodic-dispatcher.js';
import { EvalBroker } from '../../src/server/broker/eval-broker.js';
import { Heartbeater } from '../../src/server/heartbeat/heartbeater.js';
import { FakeClock, type Clock } from '../../src/time/clock.js';
import { mockEval, mockJob } from '../mock/factories.js';
import { LONG_MS, pause, realTimersAt } from './real-timers.js';

const T0 = Date.parse('2026-01-01T00:00:30Z');
/** `0 0 15 2 *` from T0: 45 days ahead, past the 24.8-day timer limit. */
const FEB15 = Date.parse('2026-02-15T00:00:00Z');

function yearlyJob(): Job {
  const base = mockJob({ ID: 'yearly', Name: 'yearly', Type: 'batch' });
  return { ...base, Periodic: { Enabled: true, Spec: '0 0 15 2 *', SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'UTC' }, Status: 'running' };
}

function dispatcher(clock: Clock, jobs: Job[]) {
  const launched: Job[] = [];
  const errors: string[] = [];
  const state = {
    jobs: (ns: string, prefix = '') => jobs.filter((j) => (ns === '*' || j.Namespace === ns) && j.ID.startsWith(prefix)),
    jobById: (ns: string, id: string) => jobs.find((j) => j.Namespace === ns && j.ID === id),
  } as unknown as StateReader;
  const d = new PeriodicDispatcher({
    clock,
    state,
    launch: async (child) => {
      launched.push(child);
      jobs.push({ ...child, Status: 'dead' });
    },
    onError: (err, what) => errors.push(`${what}: ${(err as Error).message}`),
  });
  return { d, launched, errors };
}

test('periodic launch 45 days away: fake clock launches exactly once, at its time', async () => {
  const clock = new FakeClock(T0);
  const { d, launched } = dispatcher(clock, [yearlyJob()]);
  d.start();
  assert.equal(d.nextLaunch('default', 'yearly'), FEB15);
  await clock.advanceAsync(FEB15 - T0 - 1);
  assert.equal(launched.length, 0);
  await clock.advanceAsync(1);
  assert.deepEqual(launched.map((j) => j.ID), [`yearly/periodic-${FEB15 / 1000}`]);
  d.stop();
});

test('periodic launch 45 days away: real timers launch nothing (was: a child per millisecond)', async () => {
  const { d, launched } = dispatcher(realTimersAt(new FakeClock(T0)), [yearlyJob()]);
  d.start();
  await pause(200);
  d.stop();
  assert.deepEqual(launched.map((j) => j.ID), []);
});

test('periodic launch: a timer that fires before the launch time launches nothing and waits again', async () => {
  const fake = new FakeClock(T0);
  // A platform timer that fires on the next turn whatever its delay (Node.js past 2^31−1 ms).
  const early: Clock = {
    now: () => fake.now(),
    setTimer: (_ms, fn) => {
      const h = setImmediate(fn);
      return { cancel: () => clearImmediate(h) };
    },
    sleep: () => Promise.resolve(),
  };
  const { d, launched, errors } = dispatcher(early, [yearlyJob()]);
  d.start();
  await pause(30);
  assert.deepEqual(launched.map((j) => j.ID), []);
  assert.equal(d.nextLaunch('default', 'yearly'), FEB15, 'still armed for its time');
  assert.match(errors[0] ?? '', /early/);
  d.stop();
});

test('delayed evaluation (reschedule delay, WaitUntil) 30 days away: ready at its time on the fake clock, not early with real timers', async () => {
  const fake = new FakeClock(T0);
  const job = mockJob();
  const wait = new Date(T0 + LONG_MS).toISOString();

  const broker = new EvalBroker({ clock: fake });
  broker.enqueue(mockEval(job, { ID: 'e-fake', WaitUntil: wait }));
  fake.advance(LONG_MS - 1);
  assert.equal(broker.stats().ready, 0);
  assert.equal(broker.stats().delayed, 1);
  fake.advance(1);
  assert.equal(broker.stats().ready, 1);
  assert.equal(broker.stats().delayed, 0);

  const real = new EvalBroker({ clock: realTimersAt(fake) });
  real.enqueue(mockEval(job, { ID: 'e-real', WaitUntil: new Date(fake.now() + LONG_MS).toISOString() }));
  await pause(150);
  assert.equal(real.stats().ready, 0, 'a 30-day delayed eval became ready at once');
  assert.equal(real.stats().delayed, 1);
  real.flush();
});

test('heartbeat TTL past 2^31−1 ms: the node expires at its time on the fake clock, not early with real timers', async () => {
  const fake = new FakeClock(T0);
  const expired: string[] = [];
  const hb = new Heartbeater({ clock: fake, random: () => 0, onExpire: (id) => expired.push(id), minTtlMs: LONG_MS, graceMs: 0 });
  assert.equal(hb.reset('n1'), LONG_MS);
  fake.advance(LONG_MS - 1);
  assert.deepEqual(expired, []);
  fake.advance(1);
  assert.deepEqual(expired, ['n1']);

  const realExpired: string[] = [];
  const real = new Heartbeater({ clock: realTimersAt(fake), random: () => 0, onExpire: (id) => realExpired.push(id), minTtlMs: LONG_MS, graceMs: 0 });
  real.reset('n2');
  await pause(150);
  assert.deepEqual(realExpired, []);
  real.stop();
});
