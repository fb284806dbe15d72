import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../../src/time/clock.js';
import { DriverErrorCode, type DriverError } from '../../src/drivers/driver.js';
import { createMockDriver, type MockDriver } from '../../src/drivers/index.js';
import { driverConformance, waitWhileAdvancing, type ConformanceHarness } from './conformance.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

function harness(): ConformanceHarness & { clock: FakeClock; driver: MockDriver } {
  const clock = new FakeClock();
  const driver = createMockDriver({ clock });
  return {
    root: tempRoot(),
    clock,
    driver,
    exitWith: (code) => ({ run_for: '50ms', exit_code: code }),
    runUntilStopped: () => ({ run_for: '1h', kill_after: '1s', exit_code: 0 }),
    ignoresStopSignal: () => ({ run_for: '1h', kill_after: '5s', exit_code: 137, exit_signal: 9 }),
    printLines: (lines) => ({ run_for: '10ms', stdout_string: lines.map((l) => `${l}\n`).join('') }),
    advance: (ms) => clock.advanceAsync(ms),
    expectStopped: {
      polite: (r) => assert.equal(r.exitCode, 0),
      forced: (r) => assert.deepEqual([r.exitCode, r.signal], [137, 9]),
    },
  };
}

driverConformance('mock_driver', async () => harness(), async (h) => {
  await h.driver.shutdown();
  rmSync(h.root, { recursive: true, force: true });
});

test('mock_driver: start_error is returned with its recoverability', async () => {
  const h = harness();
  for (const recoverable of [true, false]) {
    const cfg = mockTaskConfig(h.root, { start_error: 'boom', start_error_recoverable: recoverable });
    await assert.rejects(h.driver.startTask(cfg), (e: DriverError) => {
      assert.equal(e.code, DriverErrorCode.StartFailed);
      assert.equal(e.message, 'boom');
      assert.equal(e.recoverable, recoverable);
      return true;
    });
  }
});

test('mock_driver: start_block_for delays the start by clock time', async () => {
  const h = harness();
  let started = false;
  const p = h.driver.startTask(mockTaskConfig(h.root, { start_block_for: '5s', run_for: '1s' })).then(() => (started = true));
  await h.clock.advanceAsync(4_900);
  assert.equal(started, false);
  await h.clock.advanceAsync(200);
  await p;
  assert.equal(started, true);
});

test('mock_driver: run_for, exit_code, exit_signal and exit_err_msg shape the exit', async () => {
  const h = harness();
  const handle = await h.driver.startTask(mockTaskConfig(h.root, { run_for: '10s', exit_code: 2, exit_signal: 15, exit_err_msg: 'bad' }));
  await h.clock.advanceAsync(9_999);
  assert.equal(h.driver.inspectTask(handle.taskId).state, 'running');
  await h.clock.advanceAsync(1);
  const r = await h.driver.waitTask(handle.taskId);
  assert.deepEqual(r, { exitCode: 2, signal: 15, oomKilled: false, err: 'bad' });
});

test('mock_driver: no run_for exits at once, as in Nomad', async () => {
  const h = harness();
  const handle = await h.driver.startTask(mockTaskConfig(h.root, {}));
  const r = await waitWhileAdvancing(h, handle.taskId);
  assert.equal(r.exitCode, 0);
});

test('mock_driver: stdout_repeat writes the string repeat+1 times at the interval', async () => {
  const h = harness();
  const cfg = mockTaskConfig(h.root, { run_for: '10s', stdout_string: 'tick\n', stdout_repeat: 3, stdout_repeat_duration: '1s', stderr_string: 'err\n' });
  const handle = await h.driver.startTask(cfg);
  const out = join(cfg.logs.dir, 'web.stdout.0');
  assert.equal(readFileSync(out, 'utf8'), 'tick\n');
  await h.clock.advanceAsync(1_000);
  assert.equal(readFileSync(out, 'utf8'), 'tick\n'.repeat(2));
  await h.clock.advanceAsync(5_000);
  assert.equal(readFileSync(out, 'utf8'), 'tick\n'.repeat(4));
  assert.equal(readFileSync(join(cfg.logs.dir, 'web.stderr.0'), 'utf8'), 'err\n');
  await waitWhileAdvancing(h, handle.taskId, 1_000);
});

test('mock_driver: signal_error fails signalTask; signals are recorded', async () => {
  const h = harness();
  const a = await h.driver.startTask(mockTaskConfig(h.root, { run_for: '1m', signal_error: 'no signals here' }));
  await assert.rejects(h.driver.signalTask(a.taskId, 'SIGHUP'), /no signals here/);
  const b = await h.driver.startTask(mockTaskConfig(h.root, { run_for: '1m' }));
  await h.driver.signalTask(b.taskId, 'SIGHUP');
  assert.deepEqual(h.driver.signalsReceived(b.taskId), ['SIGHUP']);
});

test('mock_driver: kill_after delays the exit after a stop', async () => {
  const h = harness();
  const handle = await h.driver.startTask(mockTaskConfig(h.root, { run_for: '1h', kill_after: '3s' }));
  let stopped = false;
  const p = h.driver.stopTask(handle.taskId, 100, 'SIGINT').then(() => (stopped = true));
  await h.clock.advanceAsync(2_900);
  assert.equal(stopped, false);
  await h.clock.advanceAsync(200);
  await p;
  assert.equal(h.driver.inspectTask(handle.taskId).state, 'exited');
});

test('mock_driver: recoverTask after a restart is TaskNotFound, recoverable', async () => {
  const h = harness();
  const handle = await h.driver.startTask(mockTaskConfig(h.root, { run_for: '1h' }));
  const fresh = createMockDriver({ clock: h.clock });
  await assert.rejects(fresh.recoverTask(handle), (e: DriverError) => e.code === DriverErrorCode.TaskNotFound && e.recoverable);
  await h.driver.recoverTask(handle); // the same instance still knows it
});

test('mock_driver: bad config names the field', async () => {
  const h = harness();
  await assert.rejects(h.driver.startTask(mockTaskConfig(h.root, { run_for: 'soon' })), (e: DriverError) => {
    assert.equal(e.code, DriverErrorCode.BadConfig);
    assert.match(e.message, /"run_for"/);
    return true;
  });
  await assert.rejects(h.driver.startTask(mockTaskConfig(h.root, { exit_code: 'x' })), /"exit_code"/);
  assert.equal(existsSync(h.root), true);
});
