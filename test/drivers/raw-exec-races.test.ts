import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ExitResult } from '../../src/drivers/driver.js';
import { createRawExecDriver } from '../../src/drivers/index.js';
import { LineDecoder, encodeMessage, supervisorPaths, type SupervisorRequest } from '../../src/drivers/supervisor/protocol.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

/** waitTask, but a hang becomes a failed assertion instead of a stuck test run. */
function waitOrFail(p: Promise<ExitResult>, what: string, ms = 5_000): Promise<ExitResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: waitTask never resolved`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

function killSupervisor(dataDir: string): void {
  try {
    const pid = Number(readFileSync(supervisorPaths(dataDir).pidFile, 'utf8'));
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}

test('raw_exec: an exit event delivered in the same read as the start reply is not lost', async () => {
  const root = tempRoot();
  const dataDir = join(root, 'data');
  const paths = supervisorPaths(dataDir);
  mkdirSync(paths.dir, { recursive: true });
  // A stand-in supervisor that always answers `start` and the task's exit in one write.
  const server = createServer((sock) => {
    const dec = new LineDecoder((v) => {
      const req = v as SupervisorRequest;
      if (req.op !== 'start') return void sock.write(encodeMessage({ id: req.id, ok: true, result: {} }));
      const now = Date.now();
      const status = { taskId: req.spec.taskId, state: 'running', pid: 4242, startTime: 7, startedAt: now, exit: null };
      const exit = { exitCode: 3, signal: 0, exitedAt: now };
      sock.write(encodeMessage({ id: req.id, ok: true, result: status }) + encodeMessage({ event: 'exit', taskId: req.spec.taskId, pid: 4242, exit }));
    });
    sock.on('data', (b) => dec.push(b));
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(paths.socket, r));
  const driver = createRawExecDriver({ dataDir });
  try {
    for (let i = 0; i < 5; i++) {
      const h = await driver.startTask(mockTaskConfig(root, { command: '/bin/false' }));
      const r = await waitOrFail(driver.waitTask(h.taskId), `run ${i}`, 2_000);
      assert.equal(r.exitCode, 3);
    }
  } finally {
    await driver.shutdown();
    await new Promise((r) => server.close(r));
    rmSync(root, { recursive: true, force: true });
  }
});

test('raw_exec: fast-exiting tasks started in a loop while the event loop is busy all report their exit code', async () => {
  const root = tempRoot();
  const dataDir = join(root, 'data');
  const driver = createRawExecDriver({ dataDir, supervisorIdleMs: 1_500 });
  // Blocks the agent's event loop in bursts so replies and exit events pile up into one read.
  const busy = setInterval(() => {
    const until = Date.now() + 15;
    while (Date.now() < until) {
      // spin
    }
  }, 1);
  try {
    const runs = Array.from({ length: 40 }, async (_, i) => {
      const cfg = mockTaskConfig(root, { command: i % 2 ? '/bin/false' : '/bin/true' });
      const h = await driver.startTask(cfg);
      const r = await waitOrFail(driver.waitTask(h.taskId), `task ${i}`);
      assert.equal(r.exitCode, i % 2 ? 1 : 0, `task ${i}`);
    });
    await Promise.all(runs);
    // And one after another, each started and awaited alone.
    for (let i = 0; i < 20; i++) {
      const h = await driver.startTask(mockTaskConfig(root, { command: '/bin/false' }));
      assert.equal((await waitOrFail(driver.waitTask(h.taskId), `sequential ${i}`)).exitCode, 1);
    }
  } finally {
    clearInterval(busy);
    await driver.shutdown();
    killSupervisor(dataDir);
    await sleep(50);
    rmSync(root, { recursive: true, force: true });
  }
});
