import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { FakeClock } from '../../src/time/clock.js';
import { createMockDriver } from '../../src/drivers/index.js';
import type { MockDriver } from '../../src/drivers/mock/mock-driver.js';
import { AllocRunner } from '../../src/client/allocrunner/alloc-runner.js';
import { MemoryStateDb, type StoredAlloc } from '../../src/client/state/state-db.js';
import { mockAlloc, mockNode, mockTask } from '../mock/factories.js';
import { jobWith, silentLogger, taskRunnerHarness, tempDir, testNode, until } from './harness.js';

const types = (s: { Events: { Type: string }[] }) => s.Events.map((e) => e.Type);

/** Makes the driver's recoverTask wait until `release()` (a slow reattach). */
function gateRecover(driver: MockDriver): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const recover = driver.recoverTask.bind(driver);
  driver.recoverTask = async (h) => {
    await gate;
    return recover(h);
  };
  return release;
}

/** Whether the mock driver still has the task running. */
function running(driver: MockDriver, taskId: string): boolean {
  try {
    return driver.inspectTask(taskId).state === 'running';
  } catch {
    return false;
  }
}

/** A task left running by a shut-down runner, and its stored state for a "new agent". */
async function orphanedTask() {
  const h = taskRunnerHarness({ Config: { run_for: '1h' } });
  void h.tr.run();
  await until(h.clock, () => h.tr.driverHandle() !== null);
  const taskId = h.tr.driverHandle()!.taskId;
  await h.tr.shutdown();
  const stored = h.store.allAllocs()[0]!;
  const restoredRunner = () =>
    taskRunnerHarness({ Config: { run_for: '1h' } }, { clock: h.clock, driver: h.driver, store: h.store, restored: stored.tasks.web, allocId: stored.alloc.ID, dataDir: h.dataDir });
  return { h, taskId, restoredRunner };
}

test('kill during restore: killing a reattached runner that never ran stops the task', async () => {
  const { h, taskId, restoredRunner } = await orphanedTask();
  const h2 = restoredRunner();
  await h2.tr.restore();
  assert.ok(running(h.driver as MockDriver, taskId));
  let finished = false;
  void h2.tr.kill().then(() => (finished = true));
  await until(h.clock, () => finished, 'kill');
  assert.equal(running(h.driver as MockDriver, taskId), false, 'the restored task is still running');
  const s = h2.tr.state();
  assert.equal(s.State, 'dead');
  assert.deepEqual(types(s).slice(-3), ['Killing', 'Killed', 'Terminated']);
  assert.equal(h2.store.allAllocs()[0]!.tasks.web!.handle, null);
});

test('kill during restore: a kill that arrives while the reattach is in flight waits for it and stops the task', async () => {
  const { h, taskId, restoredRunner } = await orphanedTask();
  const release = gateRecover(h.driver as MockDriver);
  const h2 = restoredRunner();
  const restoring = h2.tr.restore();
  let finished = false;
  void h2.tr.kill().then(() => (finished = true));
  await h.clock.advanceAsync(0);
  assert.equal(finished, false, 'kill returned before the reattach finished');
  release();
  await restoring;
  await until(h.clock, () => finished, 'kill');
  assert.equal(running(h.driver as MockDriver, taskId), false, 'the restored task is still running');
  assert.equal(h2.tr.state().State, 'dead');
});

test('kill during restore: destroying a restored alloc while it reattaches stops its task before the alloc dir goes', async () => {
  const clock = new FakeClock();
  const driver = createMockDriver({ clock });
  const store = new MemoryStateDb();
  const dataDir = tempDir();
  const alloc = mockAlloc(jobWith([mockTask({ Name: 'web', Config: { run_for: '1h' } })], { Type: 'service' }), mockNode());
  const make = (restored?: StoredAlloc) =>
    new AllocRunner({
      alloc: restored?.alloc ?? alloc, dataDir, drivers: new Map([[driver.name, driver]]), node: testNode, store,
      clock, random: () => 0, logger: silentLogger, onUpdate: () => undefined, restored,
    });
  const ar = make();
  void ar.run();
  await until(clock, () => ar.taskRunner('web')!.driverHandle() !== null);
  const taskId = ar.taskRunner('web')!.driverHandle()!.taskId;
  await ar.shutdown();

  // The new agent restores the alloc; its first server answer says the alloc is gone.
  const release = gateRecover(driver);
  const ar2 = make(store.allAllocs()[0]!);
  void ar2.run();
  let destroyed = false;
  let runningWhenDirRemoved: boolean | null = null;
  const removeDir = ar2.allocDir.destroy.bind(ar2.allocDir);
  ar2.allocDir.destroy = async () => {
    runningWhenDirRemoved = running(driver, taskId);
    return removeDir();
  };
  void ar2.destroy().then(() => (destroyed = true));
  await clock.advanceAsync(0);
  release();
  await until(clock, () => destroyed, 'destroy');
  assert.equal(running(driver, taskId), false, 'the restored task is still running');
  assert.equal(runningWhenDirRemoved, false, 'the alloc dir was removed while the task ran');
  assert.equal(existsSync(ar2.allocDir.root), false);
  assert.equal(store.allAllocs().length, 0);
});
