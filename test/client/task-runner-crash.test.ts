import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TaskHandle, TaskConfig } from '../../src/drivers/driver.js';
import type { TaskState } from '../../src/structs/alloc.js';
import { createMockDriver } from '../../src/drivers/index.js';
import { MemoryStateDb, type StoredAlloc } from '../../src/client/state/state-db.js';
import { parseDuration } from '../../src/structs/duration.js';
import { FakeClock } from '../../src/time/clock.js';
import { taskRunnerHarness, until } from './harness.js';

const types = (s: { Events: { Type: string }[] }) => s.Events.map((e) => e.Type);

/**
 * A store that photographs its contents at the writes where an agent SIGKILL would leave
 * the task between "exited" and "outcome decided": right after the Terminated event is
 * written, and right after the handle is dropped.
 */
class CrashPointStore extends MemoryStateDb {
  afterTerminated: StoredAlloc[] | null = null;
  afterHandleDropped: StoredAlloc[] | null = null;
  override putTaskState(allocId: string, task: string, state: TaskState): void {
    super.putTaskState(allocId, task, state);
    if (!this.afterTerminated && state.Events.at(-1)?.Type === 'Terminated') this.afterTerminated = this.allAllocs();
  }
  override putTaskHandle(allocId: string, task: string, handle: TaskHandle | null): void {
    super.putTaskHandle(allocId, task, handle);
    if (handle === null && !this.afterHandleDropped && this.allAllocs()[0]?.tasks[task]?.state?.State === 'running') {
      this.afterHandleDropped = this.allAllocs();
    }
  }
}

/** A fresh agent's mock driver (it knows no earlier tasks) that counts starts. */
function countingDriver(clock: FakeClock): { driver: ReturnType<typeof createMockDriver>; starts: () => number } {
  const driver = createMockDriver({ clock });
  let n = 0;
  const start = driver.startTask.bind(driver);
  driver.startTask = (cfg: TaskConfig) => {
    n++;
    return start(cfg);
  };
  return { driver, starts: () => n };
}

/** Runs `task` to its first exit under a CrashPointStore, then returns the crash snapshots. */
async function runToExit(task: Parameters<typeof taskRunnerHarness>[0], jobType: 'batch' | 'service') {
  const store = new CrashPointStore();
  const h = taskRunnerHarness(task, { jobType, store });
  void h.tr.run();
  await until(h.clock, () => h.tr.state().State === 'running');
  await h.clock.advanceAsync(2_000);
  await until(h.clock, () => store.afterHandleDropped !== null && store.afterTerminated !== null, 'exit recorded');
  await h.tr.shutdown();
  return { h, store };
}

/** A new agent's runner restored from `snapshot`. */
async function restoreFrom(snapshot: StoredAlloc[], h: Awaited<ReturnType<typeof runToExit>>['h'], task: Parameters<typeof taskRunnerHarness>[0], jobType: 'batch' | 'service') {
  const clock = new FakeClock(h.clock.now());
  const { driver, starts } = countingDriver(clock);
  const stored = snapshot[0]!;
  assert.equal(stored.tasks.web!.state!.State, 'running', 'the crash point leaves the task marked running');
  const h2 = taskRunnerHarness(task, { jobType, clock, driver, restored: stored.tasks.web, allocId: stored.alloc.ID, dataDir: h.dataDir });
  await h2.tr.restore();
  const done = h2.tr.run();
  return { h2, starts, done };
}

for (const point of ['afterHandleDropped', 'afterTerminated'] as const) {
  test(`task runner crash ${point}: a finished batch task is not run again after the agent restarts`, async () => {
    const task = { Config: { run_for: '2s', exit_code: 0 } };
    const { h, store } = await runToExit(task, 'batch');
    const { h2, starts, done } = await restoreFrom(store[point]!, h, task, 'batch');
    await until(h2.clock, () => h2.tr.state().State === 'dead', 'dead');
    await done;
    const s = h2.tr.state();
    assert.equal(starts(), 0, 'the task was started again');
    assert.equal(s.Failed, false);
    assert.equal(types(s).filter((t) => t === 'Started').length, 1);
    assert.equal(types(s).at(-1), 'Terminated');
    assert.equal(h2.store.allAllocs()[0]!.tasks.web!.handle, null);
  });
}

test('task runner crash after the handle is dropped: a failed service task restarts through its policy, counted', async () => {
  const policy = { Attempts: 2, Interval: parseDuration('30m'), Delay: parseDuration('15s'), Mode: 'fail' as const };
  const task = { Config: { run_for: '2s', exit_code: 1 }, RestartPolicy: policy };
  const { h, store } = await runToExit(task, 'service');
  const { h2, starts, done } = await restoreFrom(store.afterHandleDropped!, h, task, 'service');
  await until(h2.clock, () => h2.tr.state().State === 'pending', 'restarting');
  let s = h2.tr.state();
  assert.equal(starts(), 0, 'started at once instead of after the restart delay');
  assert.deepEqual(types(s).slice(-2), ['Terminated', 'Restarting']);
  assert.equal(s.Restarts, 1);
  await h2.clock.advanceAsync(15_000);
  await until(h2.clock, () => starts() === 1 && h2.tr.state().State === 'running', 'restarted');
  s = h2.tr.state();
  assert.equal(types(s).filter((t) => t === 'Started').length, 2);
  void h2.tr.kill();
  await until(h2.clock, () => h2.tr.state().State === 'dead', 'killed');
  await done;
});

test('task runner crash during a kill: the killed task stays dead after the agent restarts', async () => {
  const task = { Config: { run_for: '1h' } };
  const store = new CrashPointStore();
  const h = taskRunnerHarness(task, { jobType: 'service', store });
  void h.tr.run();
  await until(h.clock, () => h.tr.driverHandle() !== null);
  void h.tr.kill();
  await until(h.clock, () => store.afterHandleDropped !== null, 'kill recorded');
  const { h2, starts, done } = await restoreFrom(store.afterHandleDropped!, h, task, 'service');
  await until(h2.clock, () => h2.tr.state().State === 'dead', 'dead');
  await done;
  assert.equal(starts(), 0);
  assert.deepEqual(types(h2.tr.state()).slice(-3), ['Killing', 'Killed', 'Terminated']);
});

/** A store that photographs its contents after every write, whatever the write. */
class EveryWriteStore extends MemoryStateDb {
  readonly snapshots: StoredAlloc[][] = [];
  override putTaskState(allocId: string, task: string, state: TaskState): void {
    super.putTaskState(allocId, task, state);
    this.snapshots.push(this.allAllocs());
  }
  override putTaskHandle(allocId: string, task: string, handle: TaskHandle | null): void {
    super.putTaskHandle(allocId, task, handle);
    this.snapshots.push(this.allAllocs());
  }
  override putTaskHandleAndState(allocId: string, task: string, handle: TaskHandle, state: TaskState): void {
    super.putTaskHandleAndState(allocId, task, handle, state);
    this.snapshots.push(this.allAllocs());
  }
}

test('task runner crash as the task starts: no write leaves a driver handle beside a task not marked started', async () => {
  const store = new EveryWriteStore();
  const h = taskRunnerHarness({ Config: { run_for: '1h' } }, { jobType: 'service', store });
  void h.tr.run();
  await until(h.clock, () => h.tr.state().State === 'running');
  const withHandle = store.snapshots.map((s) => s[0]!.tasks.web!).filter((t) => t.handle !== null);
  assert.ok(withHandle.length > 0, 'the handle was persisted');
  for (const t of withHandle) {
    // A reattach to such a handle would count the task running with no Started event and no StartedAt.
    assert.equal(t.state?.State, 'running', 'a handle is only ever persisted with the running state');
    assert.ok(t.state?.StartedAt, 'and its StartedAt');
    assert.equal(t.state?.Events.at(-1)?.Type, 'Started');
  }
  void h.tr.kill();
  await until(h.clock, () => h.tr.state().State === 'dead', 'killed');
});

test('a starting task writes its Received and Task Setup events together (one state-DB write, not two)', async () => {
  const store = new EveryWriteStore();
  const h = taskRunnerHarness({ Config: { run_for: '1h' } }, { jobType: 'service', store });
  void h.tr.run();
  await until(h.clock, () => h.tr.state().State === 'running');
  assert.deepEqual(types(h.states[0]!), ['Received'], 'Received is reported at once');
  const first = store.snapshots[0]![0]!.tasks.web!.state!;
  assert.deepEqual(types(first), ['Received', 'Task Setup'], 'the first write holds both events');
  void h.tr.kill();
  await until(h.clock, () => h.tr.state().State === 'dead', 'killed');
});
