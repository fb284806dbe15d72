import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeClock } from '../../src/time/clock.js';
import { DriverErrorCode, type DriverError, type TaskHandle } from '../../src/drivers/driver.js';
import { createRawExecDriver } from '../../src/drivers/index.js';
import { processAlive, readProcStat } from '../../src/drivers/proc/proc-stat.js';
import { supervisorPaths } from '../../src/drivers/supervisor/protocol.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

const sh = (script: string) => ({ command: '/bin/sh', args: ['-c', script] });

function supervisorPid(dataDir: string): number {
  try {
    return Number(readFileSync(supervisorPaths(dataDir).pidFile, 'utf8'));
  } catch {
    return 0;
  }
}

/** Starts `driverConfig` under a supervisor, then kills that supervisor: the task is left unsupervised. */
async function orphanedTask(root: string, driverConfig: Record<string, unknown>): Promise<TaskHandle> {
  const dataDir = join(root, 'data');
  const a = createRawExecDriver({ dataDir, supervisorIdleMs: 1_500 });
  const handle = await a.startTask(mockTaskConfig(root, driverConfig));
  await a.shutdown();
  process.kill(supervisorPid(dataDir), 'SIGKILL');
  await sleep(100);
  return JSON.parse(JSON.stringify(handle)) as TaskHandle;
}

function killQuietly(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

async function cleanup(root: string, driver: { shutdown(): Promise<void> }): Promise<void> {
  await driver.shutdown();
  const pid = supervisorPid(join(root, 'data'));
  try {
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
  rmSync(root, { recursive: true, force: true });
}

test('proc: a start time of 0 cannot vouch for a process; omitting it asks about liveness only', () => {
  const me = readProcStat(process.pid)!;
  assert.equal(processAlive(process.pid), true);
  assert.equal(processAlive(process.pid, me.startTime), true);
  assert.equal(processAlive(process.pid, me.startTime + 1), false);
  assert.equal(processAlive(process.pid, 0), false);
});

test('raw_exec: recovery never attaches degraded to a process it cannot identify (start time 0, not a group leader, pid 1)', async () => {
  const root = tempRoot();
  const driver = createRawExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: 1_000 });
  // A live stranger in its own process group; the supervisor of this fresh data dir never ran it.
  const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  await new Promise((r) => stranger.once('spawn', r));
  try {
    const cfg = mockTaskConfig(root, { command: 'sleep' });
    const st = readProcStat(stranger.pid!)!;
    const handles: TaskHandle[] = [
      { taskId: cfg.id, driver: 'raw_exec', config: cfg, startedAt: 0, pid: stranger.pid!, state: { startTime: 0 } },
      { taskId: cfg.id, driver: 'raw_exec', config: cfg, startedAt: 0, pid: stranger.pid!, state: {} },
      { taskId: cfg.id, driver: 'raw_exec', config: cfg, startedAt: 0, pid: 1, state: { startTime: readProcStat(1)!.startTime } },
      // Our own process: right start time, but it does not lead its own group.
      { taskId: cfg.id, driver: 'raw_exec', config: cfg, startedAt: 0, pid: process.pid, state: { startTime: readProcStat(process.pid)!.startTime } },
    ];
    if (readProcStat(process.pid)!.pgrp === process.pid) handles.pop();
    assert.ok(st.startTime > 0);
    for (const h of handles) {
      await assert.rejects(driver.recoverTask(h), (e: DriverError) => e.code === DriverErrorCode.TaskNotFound, `pid ${h.pid} ${JSON.stringify(h.state)}`);
    }
    assert.ok(processAlive(stranger.pid!, st.startTime), 'the stranger was not touched');
  } finally {
    stranger.kill('SIGKILL');
    await cleanup(root, driver);
  }
});

test('raw_exec: stopping a degraded task that already died settles it without signalling (no hang until the next poll)', async () => {
  const root = tempRoot();
  const handle = await orphanedTask(root, { command: 'sleep', args: ['30'] });
  const clock = new FakeClock(); // the liveness poll never runs unless the test advances time
  const driver = createRawExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: 1_000, clock, degradedPollMs: 60_000 });
  const realKill = process.kill.bind(process);
  const signalled: number[] = [];
  try {
    await driver.recoverTask(handle);
    assert.equal(driver.inspectTask(handle.taskId).state, 'running');
    realKill(handle.pid, 'SIGKILL');
    for (let i = 0; i < 50 && processAlive(handle.pid); i++) await sleep(20);
    process.kill = ((pid: number, sig?: string | number) => {
      signalled.push(pid);
      return realKill(pid, sig);
    }) as typeof process.kill;
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('stopTask hung')), 3_000)));
    await Promise.race([driver.stopTask(handle.taskId, 1_000, 'SIGTERM'), hung]).finally(() => clearTimeout(timer));
    const r = await driver.waitTask(handle.taskId);
    assert.ok(r.err, 'exit code is unknown without a supervisor');
    assert.deepEqual(signalled, [], 'a dead (possibly PID-reused) task is never signalled');
  } finally {
    process.kill = realKill;
    await cleanup(root, driver);
  }
});

test('raw_exec: a failing SIGKILL of a degraded task after the stop timeout is logged, never thrown from the timer', async () => {
  const root = tempRoot();
  const handle = await orphanedTask(root, sh('trap "" TERM; while true; do sleep 0.05; done'));
  const clock = new FakeClock();
  const warnings: string[] = [];
  const driver = createRawExecDriver({
    dataDir: join(root, 'data'),
    supervisorIdleMs: 1_000,
    clock,
    degradedPollMs: 60_000,
    logger: { warn: (m) => warnings.push(m) },
  });
  const realKill = process.kill.bind(process);
  try {
    await driver.recoverTask(handle);
    // Make SIGKILL fail as it would for a process of another user.
    process.kill = ((pid: number, sig?: string | number) => {
      if (sig === 9 || sig === 'SIGKILL') throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
      return realKill(pid, sig);
    }) as typeof process.kill;
    const stopping = driver.stopTask(handle.taskId, 1_000, 'SIGTERM');
    await sleep(50);
    assert.doesNotThrow(() => clock.advance(1_000));
    assert.ok(warnings.some((w) => /SIGKILL/.test(w) && /EPERM/.test(w)), warnings.join('\n'));
    process.kill = realKill;
    killQuietly(handle.pid);
    for (let i = 0; i < 50 && processAlive(handle.pid); i++) await sleep(20);
    clock.advance(60_000);
    await stopping;
    assert.ok((await driver.waitTask(handle.taskId)).err);
  } finally {
    process.kill = realKill;
    killQuietly(handle.pid);
    await cleanup(root, driver);
  }
});
