import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from '../../src/structs/duration.js';
import { killDriven, settle, taskRunnerHarness, until } from './harness.js';
import { FakeClock } from '../../src/time/clock.js';
import { createMockDriver } from '../../src/drivers/index.js';
import { FsIsolation, type TaskConfig } from '../../src/drivers/driver.js';

const policy = { Attempts: 2, Interval: parseDuration('30m'), Delay: parseDuration('15s'), Mode: 'fail' as const };
const types = (s: { Events: { Type: string }[] }) => s.Events.map((e) => e.Type);

test('task runner: a failing service task restarts per policy, then is not restarted and fails', async () => {
  const h = taskRunnerHarness({ Config: { run_for: '1s', exit_code: 1 }, RestartPolicy: policy });
  const done = h.tr.run();
  await until(h.clock, () => h.tr.state().State === 'running');
  assert.ok(h.tr.state().StartedAt);
  await h.clock.advanceAsync(1_000);
  let s = h.tr.state();
  assert.equal(s.State, 'pending');
  assert.deepEqual(types(s).slice(-2), ['Terminated', 'Restarting']);
  assert.equal(s.Events.at(-2)!.DisplayMessage, 'Exit Code: 1');
  assert.equal(s.Events.at(-1)!.DisplayMessage, 'Task restarting in 15s');
  assert.equal(s.Restarts, 1);
  for (let i = 0; i < 2; i++) {
    await h.clock.advanceAsync(15_000);
    await until(h.clock, () => h.tr.state().State === 'running');
    await h.clock.advanceAsync(1_000);
  }
  await done;
  s = h.tr.state();
  assert.equal(s.State, 'dead');
  assert.equal(s.Failed, true);
  assert.equal(s.Restarts, 2);
  assert.ok(s.FinishedAt);
  const last = s.Events.at(-1)!;
  assert.equal(last.Type, 'Not Restarting');
  assert.equal(last.DisplayMessage, 'Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"');
  // 11 events happened; the oldest (Received) was dropped.
  assert.equal(s.Events.length, 10);
  assert.equal(s.Events[0]!.Type, 'Task Setup');
  // Persisted on every transition.
  const stored = h.store.allAllocs()[0]!.tasks.web!;
  assert.equal(stored.state!.State, 'dead');
  assert.equal(stored.handle, null);
});

test('task runner: a batch task exiting 0 is dead and not failed, without restart', async () => {
  const h = taskRunnerHarness({ Config: { run_for: '2s', exit_code: 0 } }, { jobType: 'batch' });
  const done = h.tr.run();
  await until(h.clock, () => h.tr.state().State === 'running');
  await h.clock.advanceAsync(2_000);
  await done;
  const s = h.tr.state();
  assert.equal(s.State, 'dead');
  assert.equal(s.Failed, false);
  assert.equal(s.Restarts, 0);
  assert.deepEqual(types(s), ['Received', 'Task Setup', 'Started', 'Terminated']);
});

test('task runner: an unrecoverable driver failure is not restarted', async () => {
  const h = taskRunnerHarness({ Config: { start_error: 'boom' }, RestartPolicy: policy });
  await h.tr.run();
  const s = h.tr.state();
  assert.equal(s.State, 'dead');
  assert.equal(s.Failed, true);
  assert.deepEqual(types(s).slice(-2), ['Driver Failure', 'Not Restarting']);
  assert.equal(s.Events.at(-2)!.DisplayMessage, 'boom');
  assert.equal(s.Events.at(-1)!.DisplayMessage, 'Error was unrecoverable');
});

test('task runner: kill stops the task with Killing and Killed events', async () => {
  const h = taskRunnerHarness({ Config: { run_for: '1h' }, KillTimeout: parseDuration('3s') });
  void h.tr.run();
  await until(h.clock, () => h.tr.driverHandle() !== null);
  const taskId = h.tr.driverHandle()!.taskId;
  await killDriven(h.clock, h.tr);
  const s = h.tr.state();
  assert.equal(s.State, 'dead');
  assert.equal(s.Failed, false);
  assert.deepEqual(types(s).slice(-3), ['Killing', 'Killed', 'Terminated']);
  assert.equal(s.Events.find((e) => e.Type === 'Killing')!.DisplayMessage, 'Sent interrupt. Waiting 3s before force killing');
  assert.throws(() => h.driver.inspectTask(taskId));
});

test('task runner: shutdown_delay is waited with Nomad\'s event before the kill, skipped or cut short by NoShutdownDelay', async () => {
  const delayed = { Config: { run_for: '1h' }, ShutdownDelay: parseDuration('10s'), KillTimeout: parseDuration('3s') };
  const stoppingAlloc = (h: ReturnType<typeof taskRunnerHarness>) => ({ ...h.store.allAllocs()[0]!.alloc, DesiredStatus: 'stop' as const, DesiredTransition: { Migrate: true, NoShutdownDelay: true } });
  const messageOf = (h: ReturnType<typeof taskRunnerHarness>, type: string) => h.tr.state().Events.find((e) => e.Type === type)?.DisplayMessage;

  // Waited in full: no Killing until the delay has passed.
  /** A running task whose kill has begun and is waiting out the delay; `killed` settles when the kill ends. */
  const killingDuringDelay = async (task = delayed) => {
    const h = taskRunnerHarness(task);
    void h.tr.run();
    await until(h.clock, () => h.tr.driverHandle() !== null);
    let done = false;
    const kill = h.tr.kill().then(() => { done = true; });
    await until(h.clock, () => messageOf(h, 'Waiting for shutdown delay') !== undefined, 'the waiting event');
    const killed = async (): Promise<void> => {
      await until(h.clock, () => done, 'the kill');
      await kill;
    };
    return { h, killed };
  };

  const { h: waited, killed: waitedKilled } = await killingDuringDelay();
  assert.equal(messageOf(waited, 'Waiting for shutdown delay'), 'Waiting for shutdown_delay of 10s before killing the task.');
  await waited.clock.advanceAsync(9_999);
  assert.equal(messageOf(waited, 'Killing'), undefined);
  await waited.clock.advanceAsync(1);
  await waitedKilled();
  assert.deepEqual(types(waited.tr.state()).slice(-4), ['Waiting for shutdown delay', 'Killing', 'Killed', 'Terminated']);

  // Cut short: an update asking for NoShutdownDelay arrives during the delay.
  const { h: cut, killed: cutKilled } = await killingDuringDelay();
  cut.tr.takeStoppingAlloc(stoppingAlloc(cut));
  await until(cut.clock, () => messageOf(cut, 'Killing') !== undefined, 'the kill after the cut');
  const killingAt = cut.clock.now();
  await cutKilled();
  assert.ok(killingAt < 1_700_000_000_000 + 10_000, 'killed before the delay ran out');

  // Skipped: the stopping allocation says NoShutdownDelay from the start.
  const skipped = taskRunnerHarness(delayed);
  void skipped.tr.run();
  await until(skipped.clock, () => skipped.tr.driverHandle() !== null);
  skipped.tr.takeStoppingAlloc(stoppingAlloc(skipped));
  await killDriven(skipped.clock, skipped.tr);
  assert.equal(messageOf(skipped, 'Skipping shutdown delay'), 'Skipping shutdown_delay of 10s before killing the task.');
  assert.equal(messageOf(skipped, 'Waiting for shutdown delay'), undefined);

  // A task that exits during the delay is not killed.
  const { h: exits, killed: exitsEnded } = await killingDuringDelay({ ...delayed, Config: { run_for: '5s' } });
  await exits.clock.advanceAsync(5_000);
  await exitsEnded();
  assert.equal(messageOf(exits, 'Killing'), undefined);
  assert.deepEqual(types(exits.tr.state()).slice(-2), ['Waiting for shutdown delay', 'Terminated']);
});

test('task runner: shutdown leaves the task running and emits no kill events; a new runner reattaches', async () => {
  const h = taskRunnerHarness({ Config: { run_for: '1h' } });
  void h.tr.run();
  await until(h.clock, () => h.tr.driverHandle() !== null);
  const handle = h.tr.driverHandle()!;
  const startedAt = h.tr.state().StartedAt;
  await h.tr.shutdown();
  assert.equal(h.driver.inspectTask(handle.taskId).state, 'running');
  const s = h.tr.state();
  assert.equal(s.State, 'running');
  assert.ok(!types(s).includes('Killing') && !types(s).includes('Killed'));

  // "Agent restart": a new runner from the stored state with the same driver.
  const stored = h.store.allAllocs()[0]!;
  const h2 = taskRunnerHarness({ Config: { run_for: '1h' } }, { clock: h.clock, driver: h.driver, store: h.store, restored: stored.tasks.web, allocId: stored.alloc.ID, dataDir: h.dataDir });
  await h2.tr.restore();
  void h2.tr.run();
  await settle(h.clock);
  await until(h.clock, () => h2.tr.state().Events.length > 0);
  const s2 = h2.tr.state();
  assert.equal(s2.State, 'running');
  assert.equal(s2.StartedAt, startedAt);
  assert.equal(types(s2).filter((t) => t === 'Started').length, 1, 'no second Started event');
  assert.equal(h2.tr.driverHandle()!.pid, handle.pid);
  await killDriven(h.clock, h2.tr);
  assert.equal(h2.tr.state().State, 'dead');
});

test('task runner: restart() restarts in place with a Restart Signaled event', async () => {
  const h = taskRunnerHarness({ Config: { run_for: '1h' } });
  void h.tr.run();
  await until(h.clock, () => h.tr.driverHandle() !== null);
  const restarted = h.tr.restart('User requested restart');
  await h.clock.advanceAsync(0);
  await restarted;
  await until(h.clock, () => types(h.tr.state()).filter((t) => t === 'Started').length === 2 && h.tr.state().State === 'running');
  const s = h.tr.state();
  assert.equal(s.State, 'running');
  assert.ok(types(s).includes('Restart Signaled'));
  assert.equal(types(s).filter((t) => t === 'Started').length, 2);
  await killDriven(h.clock, h.tr);
});

test("task runner: `${env.X}` reads the agent's environment for drivers without an image only, as Nomad", async () => {
  const hostEnv = { CV_AGENT_ONLY: 'agent-value' };
  const envOfStart = async (image: boolean): Promise<Record<string, string>> => {
    const clock = new FakeClock();
    const inner = createMockDriver({ clock });
    const started: TaskConfig[] = [];
    // The mock driver as a container driver would declare itself (docker: an image's filesystem).
    const driver = new Proxy(inner, {
      get(target, key) {
        if (key === 'capabilities' && image) return () => ({ fsIsolation: FsIsolation.Image });
        if (key === 'startTask') return (c: TaskConfig) => (started.push(c), target.startTask(c));
        const v: unknown = Reflect.get(target, key, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const h = taskRunnerHarness({ Config: { run_for: '10s' }, Env: { FROM_AGENT: '${env.CV_AGENT_ONLY}' } }, { driver, hostEnv, clock });
    void h.tr.run();
    await until(h.clock, () => h.tr.state().State === 'running');
    await killDriven(h.clock, h.tr);
    return started[0]!.env;
  };
  assert.equal((await envOfStart(false)).FROM_AGENT, 'agent-value', 'raw_exec-like: the agent environment resolves');
  assert.equal((await envOfStart(true)).FROM_AGENT, '${env.CV_AGENT_ONLY}', 'an image driver: left as written');
});
