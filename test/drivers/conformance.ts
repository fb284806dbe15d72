/**
 * The driver conformance suite: every driver passes the same behavioural tests. A harness
 * says how to express each scenario in the driver's own config and how time passes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DriverErrorCode, TaskRunState, type Driver, type ExitResult, type TaskConfig } from '../../src/drivers/driver.js';
import { mockTaskConfig } from './task-config.js';

/** How one driver expresses the suite's scenarios. */
export interface ConformanceHarness {
  root: string;
  driver: Driver;
  /** Exits with `code` soon after start. */
  exitWith(code: number): Record<string, unknown>;
  /** Runs until stopped; exits on the stop signal. */
  runUntilStopped(): Record<string, unknown>;
  /**
   * Runs until stopped and ignores the polite stop signal (needs the SIGKILL). A real process
   * prints `ready` once its handler is installed; the suite waits for that line, since a signal
   * that arrives before the handler (a slow start on a busy machine) would end it politely.
   */
  ignoresStopSignal(): Record<string, unknown>;
  /** Whether ignoresStopSignal prints `ready` when its handler is in place (real processes). */
  ignoringPrintsReady?: boolean;
  /** Writes each line to stdout, then exits 0. */
  printLines(lines: string[]): Record<string, unknown>;
  /** Lets `ms` of (fake or real) time pass. */
  advance(ms: number): Promise<void>;
  /** The exit a stop with SIGTERM / with SIGKILL after the timeout should report. */
  expectStopped: { polite: (r: ExitResult) => void; forced: (r: ExitResult) => void };
}

/** Waits for a task's exit while advancing time in steps (for fake clocks). */
export async function waitWhileAdvancing(h: ConformanceHarness, taskId: string, stepMs = 100, steps = 200): Promise<ExitResult> {
  let done: ExitResult | null = null;
  const p = h.driver.waitTask(taskId).then((r) => (done = r));
  for (let i = 0; i < steps && !done; i++) await h.advance(stepMs);
  return p;
}

/** Advances time until the log file holds `line` (a task's own signal that it is ready); fails after ~20 s. */
async function waitForLogLine(h: ConformanceHarness, file: string, line: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // not created yet
    }
    if (text.split('\n').includes(line)) return;
    await h.advance(100);
  }
  assert.fail(`${file} never printed "${line}"`);
}

async function stopWhileAdvancing(h: ConformanceHarness, taskId: string, timeoutMs: number, signal: string): Promise<void> {
  let done = false;
  const p = h.driver.stopTask(taskId, timeoutMs, signal).then(() => (done = true));
  for (let i = 0; i < 200 && !done; i++) await h.advance(100);
  await p;
}

/** Registers the suite's tests for one driver; `setup` runs before each test. */
export function driverConformance(name: string, setup: () => Promise<ConformanceHarness>, teardown: (h: ConformanceHarness) => Promise<void>): void {
  const run = (title: string, fn: (h: ConformanceHarness) => Promise<void>) =>
    test(`${name} conformance: ${title}`, async () => {
      const h = await setup();
      try {
        await fn(h);
      } finally {
        await teardown(h);
      }
    });

  const start = async (h: ConformanceHarness, cfg: Record<string, unknown>, extra: Partial<TaskConfig> = {}) => {
    const config = mockTaskConfig(h.root, cfg, extra);
    const handle = await h.driver.startTask(config);
    return { config, handle };
  };

  run('start then wait reports exit code 0', async (h) => {
    const { handle } = await start(h, h.exitWith(0));
    assert.equal(handle.driver, h.driver.name);
    assert.ok(handle.pid > 0);
    const r = await waitWhileAdvancing(h, handle.taskId);
    assert.deepEqual({ code: r.exitCode, signal: r.signal, err: r.err }, { code: 0, signal: 0, err: undefined });
    const st = h.driver.inspectTask(handle.taskId);
    assert.equal(st.state, TaskRunState.Exited);
    assert.equal(st.exitResult?.exitCode, 0);
    assert.ok(st.completedAt !== null);
  });

  run('a non-zero exit code is reported', async (h) => {
    const { handle } = await start(h, h.exitWith(3));
    const r = await waitWhileAdvancing(h, handle.taskId);
    assert.equal(r.exitCode, 3);
  });

  run('inspect shows a running task with its pid', async (h) => {
    const { handle } = await start(h, h.runUntilStopped());
    const st = h.driver.inspectTask(handle.taskId);
    assert.equal(st.state, TaskRunState.Running);
    assert.equal(st.pid, handle.pid);
    assert.equal(st.exitResult, null);
    await stopWhileAdvancing(h, handle.taskId, 2_000, 'SIGTERM');
  });

  run('stop sends the signal and the task exits', async (h) => {
    const { handle } = await start(h, h.runUntilStopped());
    await stopWhileAdvancing(h, handle.taskId, 5_000, 'SIGTERM');
    const r = await h.driver.waitTask(handle.taskId);
    h.expectStopped.polite(r);
    assert.equal(h.driver.inspectTask(handle.taskId).state, TaskRunState.Exited);
  });

  run('stop kills a task that ignores the signal after the timeout', async (h) => {
    const { config, handle } = await start(h, h.ignoresStopSignal());
    if (h.ignoringPrintsReady) await waitForLogLine(h, join(config.logs.dir, `${config.taskName}.stdout.0`), 'ready');
    else await h.advance(300);
    await stopWhileAdvancing(h, handle.taskId, 500, 'SIGTERM');
    const r = await h.driver.waitTask(handle.taskId);
    h.expectStopped.forced(r);
  });

  run('signalTask reaches a running task', async (h) => {
    const { handle } = await start(h, h.runUntilStopped());
    // SIGWINCH is ignored by default: the task stays running whether or not it set up handlers yet.
    await h.driver.signalTask(handle.taskId, 'SIGWINCH');
    assert.equal(h.driver.inspectTask(handle.taskId).state, TaskRunState.Running);
    await stopWhileAdvancing(h, handle.taskId, 2_000, 'SIGTERM');
  });

  run('stdout lands in the rotated log file <task>.stdout.0', async (h) => {
    const lines = ['hello', 'from', 'the task'];
    const { config, handle } = await start(h, h.printLines(lines));
    await waitWhileAdvancing(h, handle.taskId);
    await h.advance(100);
    const text = readFileSync(join(config.logs.dir, `${config.taskName}.stdout.0`), 'utf8');
    assert.equal(text, lines.map((l) => `${l}\n`).join(''));
  });

  run('destroy refuses a running task unless forced, then forgets it', async (h) => {
    const { handle } = await start(h, h.runUntilStopped());
    await assert.rejects(h.driver.destroyTask(handle.taskId, false));
    let destroyed = false;
    const p = h.driver.destroyTask(handle.taskId, true).then(() => (destroyed = true));
    for (let i = 0; i < 50 && !destroyed; i++) await h.advance(100);
    await p;
    assert.throws(() => h.driver.inspectTask(handle.taskId), (e: { code?: string }) => e.code === DriverErrorCode.TaskNotFound);
  });

  run('unknown task ids are TaskNotFound', async (h) => {
    assert.throws(() => h.driver.inspectTask('nope/none'), (e: { code?: string }) => e.code === DriverErrorCode.TaskNotFound);
    await assert.rejects(h.driver.signalTask('nope/none', 'SIGTERM'), (e: { code?: string }) => e.code === DriverErrorCode.TaskNotFound);
  });

  run('fingerprint reports the driver detected and healthy', async (h) => {
    const fp = await h.driver.fingerprint();
    assert.equal(fp.detected, true);
    assert.equal(fp.healthy, true);
  });
}
