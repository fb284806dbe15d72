import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRawExecDriver } from '../../src/drivers/index.js';
import { processGroupMembers } from '../../src/drivers/proc/proc-stat.js';
import { supervisorPaths } from '../../src/drivers/supervisor/protocol.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

const sh = (script: string) => ({ command: '/bin/sh', args: ['-c', script] });

/** Live members of a group, waiting briefly for SIGKILLed ones to die. */
async function groupAfterSettling(pgid: number): Promise<number[]> {
  for (let i = 0; i < 40; i++) {
    const pids = processGroupMembers(pgid).map((m) => m.pid);
    if (pids.length === 0) return pids;
    await sleep(50);
  }
  return processGroupMembers(pgid).map((m) => m.pid);
}

function killGroupQuietly(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

async function cleanup(root: string, driver: { shutdown(): Promise<void> }): Promise<void> {
  await driver.shutdown();
  try {
    const pid = Number(readFileSync(supervisorPaths(join(root, 'data')).pidFile, 'utf8'));
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
  rmSync(root, { recursive: true, force: true });
}

test('raw_exec: processes a task backgrounded do not outlive its main process', async () => {
  const root = tempRoot();
  const driver = createRawExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: 1_500 });
  let pgid = 0;
  try {
    const h = await driver.startTask(mockTaskConfig(root, sh('sleep 300 & sleep 300 & echo started; sleep 0.3; exit 2')));
    pgid = h.pid;
    await sleep(150);
    assert.ok(processGroupMembers(pgid).length >= 3, 'the background sleeps run in the task group');
    assert.equal((await driver.waitTask(h.taskId)).exitCode, 2);
    assert.deepEqual(await groupAfterSettling(pgid), [], 'no process of the task group remains after its exit');
    await driver.destroyTask(h.taskId, true);
  } finally {
    if (pgid > 1) killGroupQuietly(pgid);
    await cleanup(root, driver);
  }
});

test('raw_exec: stopping a task kills its whole group, including children that ignore the stop signal', async () => {
  const root = tempRoot();
  const driver = createRawExecDriver({ dataDir: join(root, 'data'), supervisorIdleMs: 1_500 });
  let pgid = 0;
  try {
    // The main process dies on TERM at once; its child ignores TERM and would linger.
    const h = await driver.startTask(mockTaskConfig(root, sh('(trap "" TERM; while true; do sleep 0.05; done) & wait')));
    pgid = h.pid;
    await sleep(150);
    await driver.stopTask(h.taskId, 5_000, 'SIGTERM');
    assert.equal((await driver.waitTask(h.taskId)).signal, 15);
    assert.deepEqual(await groupAfterSettling(pgid), []);
    await driver.destroyTask(h.taskId, true);
  } finally {
    if (pgid > 1) killGroupQuietly(pgid);
    await cleanup(root, driver);
  }
});
