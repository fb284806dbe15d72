import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/time/clock.js';
import { createMockDriver } from '../../src/drivers/index.js';
import { AllocRunner } from '../../src/client/allocrunner/alloc-runner.js';
import { allocClientStatus } from '../../src/client/allocrunner/alloc-status.js';
import { MemoryStateDb } from '../../src/client/state/state-db.js';
import type { AllocClientUpdate } from '../../src/structs/alloc.js';
import { mockAlloc, mockNode, mockTask } from '../mock/factories.js';
import { jobWith, silentLogger, tempDir, testNode, until } from './harness.js';
import { parseDuration } from '../../src/structs/duration.js';
import { MAX_RUN_DURATION_REASON } from '../../src/client/taskrunner/hooks/max-run-duration-hook.js';

function runner(tasks: ReturnType<typeof mockTask>[], jobType: 'service' | 'batch' = 'batch') {
  const clock = new FakeClock();
  const driver = createMockDriver({ clock });
  const updates: AllocClientUpdate[] = [];
  const job = jobWith(tasks, { Type: jobType });
  const alloc = mockAlloc(job, mockNode());
  const ar = new AllocRunner({
    alloc, dataDir: tempDir(), drivers: new Map([[driver.name, driver]]), node: testNode, store: new MemoryStateDb(),
    clock, random: () => 0, logger: silentLogger, onUpdate: (u) => updates.push(u),
  });
  return { ar, clock, updates };
}

const startedAt = (u: AllocClientUpdate, t: string) => u.TaskStates[t]!.Events.find((e) => e.Type === 'Started')?.Time ?? Infinity;

test('alloc runner: prestart → main → poststop order; status complete', async () => {
  const { ar, clock, updates } = runner([
    mockTask({ Name: 'init', Lifecycle: { Hook: 'prestart', Sidecar: false }, Config: { run_for: '1s' } }),
    mockTask({ Name: 'main', Config: { run_for: '2s' } }),
    mockTask({ Name: 'cleanup', Lifecycle: { Hook: 'poststop', Sidecar: false }, Config: { run_for: '1s' } }),
  ]);
  const done = ar.run();
  let finished = false;
  void done.then(() => { finished = true; });
  for (let i = 0; i < 10 && !finished; i++) {
    await until(clock, () => Object.values(ar.clientUpdate().TaskStates).some((s) => s.State === 'running') || ar.isDone(), 'a running task');
    await clock.advanceAsync(1_000);
  }
  await done;
  const last = updates.at(-1)!;
  assert.equal(last.ClientStatus, 'complete');
  assert.ok(startedAt(last, 'init') < startedAt(last, 'main'));
  assert.ok(startedAt(last, 'main') < startedAt(last, 'cleanup'));
  assert.ok(updates.some((u) => u.ClientStatus === 'pending'));
  assert.ok(updates.some((u) => u.ClientStatus === 'running'));
});

test('alloc runner: when max_run_duration ends the allocation its poststop task never starts (Nomad)', async () => {
  const { ar, clock, updates } = runner([
    mockTask({ Name: 'main', Config: { run_for: '1h' }, MaxRunDuration: parseDuration('5s'), KillTimeout: parseDuration('1s') }),
    mockTask({ Name: 'cleanup', Lifecycle: { Hook: 'poststop', Sidecar: false }, Config: { run_for: '1s' } }),
  ]);
  const done = ar.run();
  let finished = false;
  void done.then(() => { finished = true; });
  await until(clock, () => ar.clientUpdate().TaskStates.main?.State === 'running', 'main running');
  for (let i = 0; i < 20 && !finished; i++) {
    await clock.advanceAsync(1_000);
    await new Promise((r) => setTimeout(r, 5));
  }
  await until(clock, () => finished, 'alloc done');
  const last = updates.at(-1)!;
  assert.equal(last.ClientStatus, 'complete');
  assert.equal(last.ClientDescription, MAX_RUN_DURATION_REASON);
  const cleanup = last.TaskStates.cleanup!;
  assert.equal(cleanup.State, 'dead');
  assert.equal(cleanup.StartedAt, null, 'the poststop task never started');
  assert.ok(!cleanup.Events.some((e) => e.Type === 'Started'), JSON.stringify(cleanup.Events.map((e) => e.Type)));
});

test('alloc runner: a failed task kills its siblings with "Sibling Task Failed"', async () => {
  const { ar, clock } = runner(
    [
      mockTask({ Name: 'bad', Config: { run_for: '1s', exit_code: 2 }, RestartPolicy: { Attempts: 0, Interval: 1e12, Delay: 1e9, Mode: 'fail' } }),
      mockTask({ Name: 'good', Config: { run_for: '1h' } }),
    ],
    'service',
  );
  const done = ar.run();
  await until(clock, () => ar.clientUpdate().ClientStatus === 'running');
  let finished = false;
  void done.then(() => { finished = true; });
  // Time moves in steps until the alloc is done: under load "bad" may start its 1 s only after
  // the first step (the alloc runs once either task does), and "good" runs for an hour.
  for (let i = 0; i < 30 && !finished; i++) {
    await clock.advanceAsync(1_000);
    await new Promise((r) => setTimeout(r, 10));
  }
  await until(clock, () => finished, 'alloc done');
  const u = ar.clientUpdate();
  assert.equal(u.ClientStatus, 'failed');
  const good = u.TaskStates.good!;
  assert.equal(good.State, 'dead');
  const ev = good.Events.find((e) => e.Type === 'Sibling Task Failed')!;
  assert.equal(ev.FailedSibling, 'bad');
  assert.equal(ev.DisplayMessage, 'Task\'s sibling "bad" failed');
  assert.ok(good.Events.some((e) => e.Type === 'Killed'));
});

test('alloc status follows Nomad: failed > running > pending > complete', () => {
  const rows: { name: string; states: Record<string, { State: 'pending' | 'running' | 'dead'; Failed: boolean }>; want: string }[] = [
    { name: 'a running task wins over a pending one', states: { a: { State: 'running', Failed: false }, b: { State: 'pending', Failed: false } }, want: 'running' },
    { name: 'nothing started', states: { a: { State: 'pending', Failed: false } }, want: 'pending' },
    { name: 'a poststop task not yet run keeps a finished alloc pending', states: { a: { State: 'dead', Failed: false }, p: { State: 'pending', Failed: false } }, want: 'pending' },
    { name: 'any failed task fails the alloc', states: { a: { State: 'dead', Failed: false }, b: { State: 'dead', Failed: true } }, want: 'failed' },
    { name: 'all dead, none failed', states: { a: { State: 'dead', Failed: false } }, want: 'complete' },
  ];
  for (const r of rows) assert.equal(allocClientStatus(r.states).status, r.want, r.name);
});
