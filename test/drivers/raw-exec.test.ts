import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { DriverErrorCode, type DriverError, type TaskHandle } from '../../src/drivers/driver.js';
import { createRawExecDriver } from '../../src/drivers/index.js';
import { processAlive, readProcStat } from '../../src/drivers/proc/proc-stat.js';
import { supervisorPaths } from '../../src/drivers/supervisor/protocol.js';
import { driverConformance, type ConformanceHarness } from './conformance.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

const IDLE_MS = 1_500;
const sh = (script: string) => ({ command: '/bin/sh', args: ['-c', script] });

function newDriver(root: string) {
  return createRawExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: IDLE_MS, degradedPollMs: 100 });
}

function harness(): ConformanceHarness {
  const root = tempRoot();
  return {
    root,
    driver: newDriver(root),
    exitWith: (code) => sh(`exit ${code}`),
    runUntilStopped: () => ({ command: 'sleep', args: ['30'] }),
    ignoresStopSignal: () => sh('trap "" TERM; echo ready; sleep 30 & wait; sleep 30'),
    ignoringPrintsReady: true,
    printLines: (lines) => sh(lines.map((l) => `echo '${l}'`).join('; ')),
    advance: (ms) => sleep(Math.min(ms, 50)),
    expectStopped: {
      polite: (r) => assert.deepEqual([r.exitCode, r.signal], [128 + 15, 15]),
      forced: (r) => assert.deepEqual([r.exitCode, r.signal], [128 + 9, 9]),
    },
  };
}

/**
 * Kills the supervisor of a test data dir (tests own it) so no daemon outlives the run, and
 * waits until it is gone: on its way out it still removes files under the data dir.
 */
async function killSupervisor(dataDir: string): Promise<void> {
  let pid = 0;
  try {
    pid = Number(readFileSync(supervisorPaths(dataDir).pidFile, 'utf8'));
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 100 && pid > 0; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(20);
  }
}

async function cleanup(root: string, driver: { shutdown(): Promise<void> }): Promise<void> {
  await driver.shutdown();
  await killSupervisor(join(root, 'data'));
  rmSync(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}

driverConformance('raw_exec', async () => harness(), async (h) => cleanup(h.root, h.driver));

test('raw_exec: a missing command is a BadConfig error naming "command"', async () => {
  const h = harness();
  try {
    await assert.rejects(h.driver.startTask(mockTaskConfig(h.root, { args: ['x'] })), (e: DriverError) => {
      assert.equal(e.code, DriverErrorCode.BadConfig);
      assert.match(e.message, /"command"/);
      return true;
    });
    await assert.rejects(h.driver.startTask(mockTaskConfig(h.root, { command: 'sleep', args: 'x' })), /"args"/);
  } finally {
    await cleanup(h.root, h.driver);
  }
});

test('raw_exec: runs in the task dir with the task env and the inherited PATH; relative commands resolve in the task dir', async () => {
  const h = harness();
  try {
    const cfg = mockTaskConfig(h.root, { command: 'run.sh' }, { env: { GREETING: 'hi' } });
    writeFileSync(join(cfg.dirs.dir, 'run.sh'), '#!/bin/sh\necho "$GREETING $(pwd)"\ncommand -v sleep\n');
    chmodSync(join(cfg.dirs.dir, 'run.sh'), 0o755);
    const handle = await h.driver.startTask(cfg);
    assert.equal((await h.driver.waitTask(handle.taskId)).exitCode, 0);
    const out = readFileSync(join(cfg.logs.dir, 'web.stdout.0'), 'utf8').split('\n');
    assert.equal(out[0], `hi ${cfg.dirs.dir}`);
    assert.match(out[1]!, /sleep$/);
  } finally {
    await cleanup(h.root, h.driver);
  }
});

test('raw_exec: a task survives driver shutdown and a new driver recovers it with the same pid and its real exit code', async () => {
  const root = tempRoot();
  const a = newDriver(root);
  const handle = await a.startTask(mockTaskConfig(root, sh('sleep 1; exit 5')));
  await a.shutdown();
  assert.ok(processAlive(handle.pid));
  const b = newDriver(root);
  try {
    const persisted = JSON.parse(JSON.stringify(handle)) as TaskHandle; // as the client DB would store it
    await b.recoverTask(persisted);
    const st = b.inspectTask(handle.taskId);
    assert.equal(st.pid, handle.pid);
    assert.equal(st.state, 'running');
    assert.equal((await b.waitTask(handle.taskId)).exitCode, 5);
  } finally {
    await cleanup(root, b);
  }
});

test('raw_exec: a task that exits while no driver is attached reports its real exit code on recover', async () => {
  const root = tempRoot();
  const a = newDriver(root);
  const handle = await a.startTask(mockTaskConfig(root, sh('sleep 0.2; exit 4')));
  await a.shutdown();
  await sleep(800);
  assert.equal(processAlive(handle.pid), false);
  const b = newDriver(root);
  try {
    await b.recoverTask(handle);
    assert.equal(b.inspectTask(handle.taskId).state, 'exited');
    const r = await b.waitTask(handle.taskId);
    assert.deepEqual([r.exitCode, r.signal, r.err], [4, 0, undefined]);
  } finally {
    await cleanup(root, b);
  }
});

test('raw_exec: the supervisor and its task survive the starting agent being SIGKILLed', async () => {
  const root = tempRoot();
  const dataDir = join(root, 'data');
  const fixture = fileURLToPath(new URL('./fixtures/start-and-hang.js', import.meta.url));
  const agent = spawn(process.execPath, [fixture, dataDir, root], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    agent.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
    });
    agent.once('exit', (code) => reject(new Error(`fixture exited early with ${code}`)));
  });
  const handle = JSON.parse(line) as TaskHandle;
  agent.kill('SIGKILL');
  await new Promise((r) => agent.once('exit', r));
  await sleep(200);
  assert.ok(processAlive(handle.pid, Number(handle.state['startTime'])), 'task still alive after agent kill -9');
  const b = newDriver(root);
  try {
    await b.recoverTask(handle);
    assert.equal(b.inspectTask(handle.taskId).pid, handle.pid);
    await b.stopTask(handle.taskId, 2_000, 'SIGTERM');
    const r = await b.waitTask(handle.taskId);
    assert.equal(r.signal, 15);
    assert.match(readFileSync(join(handle.config.logs.dir, 'web.stdout.0'), 'utf8'), /started/);
  } finally {
    await cleanup(root, b);
  }
});

test('raw_exec: with its supervisor gone, a live task is reattached degraded and its end reported as unknown', async () => {
  const root = tempRoot();
  const a = newDriver(root);
  const handle = await a.startTask(mockTaskConfig(root, { command: 'sleep', args: ['30'] }));
  await a.shutdown();
  const supPid = Number(readFileSync(supervisorPaths(join(root, 'data')).pidFile, 'utf8'));
  process.kill(supPid, 'SIGKILL');
  await sleep(200);
  assert.ok(processAlive(handle.pid));
  const b = newDriver(root);
  try {
    await b.recoverTask(handle);
    assert.equal(b.inspectTask(handle.taskId).state, 'running');
    await b.stopTask(handle.taskId, 1_000, 'SIGTERM');
    const r = await b.waitTask(handle.taskId);
    assert.ok(r.err, 'exit code is unknown without a supervisor');
  } finally {
    await cleanup(root, b);
  }
});

test('raw_exec: recovering a task that is gone without a record is TaskNotFound', async () => {
  const root = tempRoot();
  const b = newDriver(root);
  try {
    const cfg = mockTaskConfig(root, { command: 'sleep' });
    const fake: TaskHandle = { taskId: cfg.id, driver: 'raw_exec', config: cfg, startedAt: 0, pid: 999_999_9, state: { startTime: 1 } };
    await assert.rejects(b.recoverTask(fake), (e: DriverError) => e.code === DriverErrorCode.TaskNotFound);
  } finally {
    await cleanup(root, b);
  }
});

test('raw_exec: 1,000 lines rotate across files, oldest deleted, none lost in the kept files', async () => {
  const h = harness();
  try {
    // ~10 KB per file; 1,000 lines of 100 bytes make ~10 files, of which 3 are kept.
    const cfg = mockTaskConfig(h.root, sh('i=0; while [ $i -lt 1000 ]; do printf "%099d\\n" $i; i=$((i+1)); done'), {
      logs: { maxFiles: 3, maxFileSizeMB: 10_000 / (1024 * 1024) },
    });
    const handle = await h.driver.startTask(cfg);
    assert.equal((await h.driver.waitTask(handle.taskId)).exitCode, 0);
    await sleep(100);
    const idx = readdirSync(cfg.logs.dir)
      .filter((n) => n.startsWith('web.stdout.'))
      .map((n) => Number(n.split('.').pop()))
      .sort((x, y) => x - y);
    assert.equal(idx.length, 3);
    assert.equal(idx[2]! - idx[0]!, 2);
    assert.ok(idx[2]! >= 9);
    const text = idx.map((i) => readFileSync(join(cfg.logs.dir, `web.stdout.${i}`), 'utf8')).join('');
    for (const i of idx.slice(0, 2)) assert.equal(readFileSync(join(cfg.logs.dir, `web.stdout.${i}`)).length, 10_000);
    const lines = text.split('\n').filter((l) => l.length === 99);
    assert.equal(Number(lines[lines.length - 1]), 999);
    for (let k = 1; k < lines.length; k++) assert.equal(Number(lines[k]), Number(lines[k - 1]) + 1);
  } finally {
    await cleanup(h.root, h.driver);
  }
});

test('raw_exec: stats read the task process group from /proc; signals reach the task', async () => {
  const h = harness();
  try {
    const cfg = mockTaskConfig(h.root, sh('trap "echo got-usr1; exit 7" USR1; while true; do sleep 0.05; done'));
    const handle = await h.driver.startTask(cfg);
    await sleep(200);
    const s = await h.driver.taskStats(handle.taskId);
    assert.ok(s.pids.includes(handle.pid));
    assert.ok(s.memoryRssBytes > 0);
    assert.equal(readProcStat(handle.pid)?.pgrp, handle.pid, 'task leads its own process group');
    await h.driver.signalTask(handle.taskId, 'SIGUSR1');
    assert.equal((await h.driver.waitTask(handle.taskId)).exitCode, 7);
    assert.match(readFileSync(join(cfg.logs.dir, 'web.stdout.0'), 'utf8'), /got-usr1/);
    assert.deepEqual(h.driver.execSpec(handle.taskId, ['ls', '-l']).args, ['-l']);
  } finally {
    await cleanup(h.root, h.driver);
  }
});
