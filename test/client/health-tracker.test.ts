import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthTracker, healthSettings, mainTaskNames } from '../../src/client/allocrunner/health-tracker.js';
import { FakeClock } from '../../src/time/clock.js';
import type { TaskState } from '../../src/structs/alloc.js';
import { mockTask } from '../mock/factories.js';

function state(s: Partial<TaskState>): TaskState {
  return {
    State: 'running', Failed: false, Restarts: 0, LastRestart: null, StartedAt: '2023-11-14T22:13:20Z', FinishedAt: null, Events: [],
    ...s,
  } as TaskState;
}

function tracker(minHealthyMs = 1_000, healthyDeadlineMs = 30_000) {
  const clock = new FakeClock();
  const verdicts: boolean[] = [];
  const t = new HealthTracker({ clock, minHealthyMs, healthyDeadlineMs, mainTasks: ['web'], onHealth: (h) => verdicts.push(h) });
  t.start();
  return { clock, t, verdicts };
}

test('healthy after every main task ran for min_healthy_time', () => {
  const { clock, t, verdicts } = tracker();
  t.update({ web: state({ State: 'pending' }) });
  clock.advance(5_000);
  t.update({ web: state({}) });
  clock.advance(999);
  assert.deepEqual(verdicts, []);
  clock.advance(1);
  assert.deepEqual(verdicts, [true]);
  clock.advance(60_000);
  assert.deepEqual(verdicts, [true], 'decides once');
});

test('a restart starts the streak again', () => {
  const { clock, t, verdicts } = tracker();
  t.update({ web: state({}) });
  clock.advance(800);
  t.update({ web: state({ Restarts: 1, LastRestart: '2023-11-14T22:13:21Z' }) });
  clock.advance(800);
  assert.deepEqual(verdicts, []);
  clock.advance(200);
  assert.deepEqual(verdicts, [true]);
});

test('a failed task or the healthy deadline makes the alloc unhealthy', () => {
  const a = tracker();
  a.t.update({ web: state({ State: 'dead', Failed: true }) });
  assert.deepEqual(a.verdicts, [false]);

  const b = tracker(1_000, 10_000);
  b.t.update({ web: state({ State: 'pending' }) });
  b.clock.advance(10_000);
  assert.deepEqual(b.verdicts, [false]);
});

test('stop() gives no verdict; manual health_check tracks nothing; lifecycle tasks are not main tasks', () => {
  const { clock, t, verdicts } = tracker();
  t.update({ web: state({}) });
  t.stop();
  clock.advance(60_000);
  assert.deepEqual(verdicts, []);
  assert.equal(healthSettings(null), null);
  const names = mainTaskNames([
    mockTask({ Name: 'web' }),
    mockTask({ Name: 'init', Lifecycle: { Hook: 'prestart', Sidecar: false } }),
    mockTask({ Name: 'proxy', Lifecycle: { Hook: 'prestart', Sidecar: true } }),
  ]);
  assert.deepEqual(names, ['web', 'proxy']);
});

test('health_check "checks": healthy only once the service checks have passed for min_healthy_time too', () => {
  const clock = new FakeClock();
  const verdicts: boolean[] = [];
  const t = new HealthTracker({ clock, minHealthyMs: 1_000, healthyDeadlineMs: 30_000, mainTasks: ['web'], checksRequired: true, onHealth: (h) => verdicts.push(h) });
  t.start();
  t.checksChanged(false);
  t.update({ web: state({}) });
  clock.advance(5_000);
  assert.deepEqual(verdicts, [], 'running but its checks failing is not healthy');
  t.checksChanged(true);
  clock.advance(600);
  t.checksChanged(false);
  clock.advance(600);
  t.checksChanged(true);
  clock.advance(999);
  assert.deepEqual(verdicts, [], 'a failing check starts the streak again');
  clock.advance(1);
  assert.deepEqual(verdicts, [true]);
});
