/**
 * Client density benchmark: starts N (`--tasks`, default 1,000) `sleep 3600` raw_exec tasks
 * through the driver and its supervisor, and reports the supervisor's memory per task
 * against the goal (≤ 0.5 MB per task, GOALS.md). Writes bench/results/client-density.json,
 * then stops every task.
 *
 *   npm run build && node dist/bench/client/density.js --tasks 100
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRawExecDriver, type TaskConfig, type TaskHandle } from '../../src/drivers/index.js';
import { readPssBytes, readRssBytes } from '../../src/drivers/proc/proc-stat.js';
import { SupervisorClient } from '../../src/drivers/supervisor/supervisor-client.js';

const GOAL_MB_PER_TASK = 0.5;
const MB = 1024 * 1024;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
}

function taskConfig(root: string, i: number): TaskConfig {
  const allocId = `bench-${i.toString().padStart(5, '0')}`;
  const allocDir = join(root, 'alloc', allocId);
  const dir = join(allocDir, 'sleeper');
  const logDir = join(allocDir, 'alloc', 'logs');
  mkdirSync(dir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  return {
    id: `${allocId}/sleeper`,
    allocId,
    taskName: 'sleeper',
    jobName: 'density',
    groupName: 'g',
    driverConfig: { command: 'sleep', args: ['3600'] },
    env: {},
    user: '',
    dirs: { dir, localDir: dir, secretsDir: dir, tmpDir: dir, sharedAllocDir: join(allocDir, 'alloc'), logDir },
    resources: { cpuShares: 10, memoryMB: 10, memoryMaxMB: 0 },
    logs: { dir: logDir, maxFiles: 10, maxFileSizeMB: 10 },
  };
}

function memory(pid: number): { rssMB: number; pssMB: number | null } {
  const pss = readPssBytes(pid);
  return { rssMB: readRssBytes(pid) / MB, pssMB: pss === null ? null : pss / MB };
}

async function main(): Promise<void> {
  const n = Number(arg('tasks', '1000'));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--tasks must be a positive integer, got "${arg('tasks', '')}"`);
  const root = mkdtempSync(join(tmpdir(), 'caravan-density-'));
  const dataDir = join(root, 'data');
  const probe = new SupervisorClient({ dataDir, idleMs: 10_000 });
  const hello = await probe.request('hello', {});
  const supPid = hello.pid;
  await new Promise((r) => setTimeout(r, 500));
  const before = memory(supPid);

  const driver = createRawExecDriver({ dataDir, supervisorIdleMs: 10_000 });
  const handles: TaskHandle[] = [];
  const t0 = performance.now();
  const BATCH = 50;
  for (let i = 0; i < n; i += BATCH) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) batch.push(driver.startTask(taskConfig(root, j)));
    handles.push(...(await Promise.all(batch)));
  }
  const startMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 1_000));
  const after = memory(supPid);
  const perTaskRss = (after.rssMB - before.rssMB) / n;
  const perTaskPss = after.pssMB !== null && before.pssMB !== null ? (after.pssMB - before.pssMB) / n : null;
  // Per-task share including the supervisor's fixed baseline, amortised over N.
  const amortisedRss = after.rssMB / n;

  const result = {
    benchmark: 'client-density',
    tasks: n,
    supervisorPid: supPid,
    startSeconds: startMs / 1000,
    supervisor: { before, after },
    mbPerTask: { rssIncrement: perTaskRss, pssIncrement: perTaskPss, rssAmortisedIncludingBaseline: amortisedRss },
    goalMbPerTask: GOAL_MB_PER_TASK,
    meetsGoal: Math.max(perTaskRss, amortisedRss) <= GOAL_MB_PER_TASK,
    note: "supervisor only; the agent's own per-task share is added by the integrated benchmark",
    timestamp: new Date().toISOString(),
  };
  console.log(`started ${n} tasks in ${(startMs / 1000).toFixed(2)} s`);
  console.log(`supervisor RSS ${before.rssMB.toFixed(1)} MB → ${after.rssMB.toFixed(1)} MB` + (after.pssMB !== null ? `, PSS ${before.pssMB?.toFixed(1)} → ${after.pssMB.toFixed(1)} MB` : ''));
  console.log(`per task: ${perTaskRss.toFixed(3)} MB RSS increment` + (perTaskPss !== null ? `, ${perTaskPss.toFixed(3)} MB PSS increment` : '') + `, ${amortisedRss.toFixed(3)} MB amortised incl. baseline (goal ≤ ${GOAL_MB_PER_TASK} MB): ${result.meetsGoal ? 'PASS' : 'FAIL'}`);

  const outDir = join(process.cwd(), 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'client-density.json'), JSON.stringify(result, null, 2) + '\n');

  for (let i = 0; i < handles.length; i += BATCH) {
    await Promise.all(handles.slice(i, i + BATCH).map(async (h) => {
      await driver.stopTask(h.taskId, 2_000, 'SIGTERM');
      await driver.destroyTask(h.taskId, true);
    }));
  }
  await driver.shutdown();
  probe.close();
  try {
    process.kill(supPid, 'SIGTERM');
  } catch {
    // Already idle-exited.
  }
  rmSync(root, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
