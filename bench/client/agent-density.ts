/**
 * Agent-level client density benchmark: starts a `caravan agent -dev`, runs N (`--tasks`,
 * default 1,000) raw_exec `sleep` tasks through it as one service job, and reports the memory
 * overhead of the agent and its supervisor per task — (RSS with N tasks − RSS idle) / N — beside
 * the goal (≤ 0.5 MB per task, GOALS.md). The task processes themselves are not overhead and are
 * not counted. Writes bench/results/client-agent-density.json, then stops everything.
 *
 *   npm run build && node dist/bench/client/agent-density.js [--tasks 1000]
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readRssBytes } from '../../src/drivers/proc/proc-stat.js';
import { startBenchAgent } from '../dev-agent.js';

const GOAL_MB_PER_TASK = 0.5;
const MB = 1024 * 1024;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : dflt;
}

/** The supervisor of this data dir (its command line names the data dir), if running. */
function supervisorPid(dataDir: string): number | undefined {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmd.includes('supervisor-main') && cmd.includes(dataDir)) return Number(name);
    } catch {
      // gone
    }
  }
  return undefined;
}

function jobBody(id: string, count: number, command: string, args: string[]): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Datacenters: ['*'],
      TaskGroups: [{ Name: 'g', Count: count, EphemeralDisk: { SizeMB: 10 }, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command, args }, Resources: { CPU: 1, MemoryMB: 10 } }] }],
    },
  };
}

async function runningCount(addr: string, jobId: string): Promise<number> {
  const res = await fetch(`${addr}/v1/job/${jobId}/summary`);
  if (!res.ok) return 0;
  const s = (await res.json()) as { Summary: Record<string, { Running: number }> };
  return Object.values(s.Summary).reduce((n, g) => n + g.Running, 0);
}

async function waitRunning(addr: string, jobId: string, n: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 0;
  while (Date.now() < deadline) {
    last = await runningCount(addr, jobId);
    if (last >= n) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`only ${last}/${n} allocations of ${jobId} running after ${timeoutMs / 1000} s`);
}

async function register(addr: string, body: unknown): Promise<void> {
  const res = await fetch(`${addr}/v1/jobs`, { method: 'PUT', body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  if (!res.ok) throw new Error(`register: ${res.status} ${await res.text()}`);
}

async function main(): Promise<void> {
  const n = Number(arg('tasks', '1000'));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--tasks must be a positive integer, got "${arg('tasks', '')}"`);
  const agent = await startBenchAgent();
  try {
    const addr = agent.address;
    const agentPid = agent.proc.pid!;
    // One warm-up task so the supervisor is up and the task path is JIT-warm; it stays running.
    await register(addr, jobBody('density-warmup', 1, 'sleep', ['3600']));
    await waitRunning(addr, 'density-warmup', 1, 30_000);
    await new Promise((r) => setTimeout(r, 2_000));
    const supPid = supervisorPid(agent.dataDir);
    if (supPid === undefined) throw new Error('no supervisor process found for the dev agent');
    const before = { agent: readRssBytes(agentPid), supervisor: readRssBytes(supPid) };

    const t0 = Date.now();
    await register(addr, jobBody('density', n, 'sleep', ['3600']));
    await waitRunning(addr, 'density', n, 600_000);
    const startSecs = (Date.now() - t0) / 1000;
    // Let update batches, state writes and GC settle before measuring.
    await new Promise((r) => setTimeout(r, 5_000));
    const after = { agent: readRssBytes(agentPid), supervisor: readRssBytes(supPid) };

    const deltaMB = (after.agent + after.supervisor - before.agent - before.supervisor) / MB;
    const perTask = deltaMB / n;
    const met = perTask <= GOAL_MB_PER_TASK;
    console.log(`${n} tasks running through a dev agent in ${startSecs.toFixed(1)} s`);
    console.log(`  agent RSS ${(before.agent / MB).toFixed(1)} → ${(after.agent / MB).toFixed(1)} MB, supervisor RSS ${(before.supervisor / MB).toFixed(1)} → ${(after.supervisor / MB).toFixed(1)} MB`);
    console.log(`agent+supervisor overhead: ${perTask.toFixed(3)} MB per task (goal ≤ ${GOAL_MB_PER_TASK} MB) ${met ? 'MET' : 'NOT MET'}`);
    const out = join(process.cwd(), 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, 'client-agent-density.json'),
      JSON.stringify(
        {
          tasks: n,
          startSeconds: startSecs,
          rssMB: {
            agentBefore: before.agent / MB,
            agentAfter: after.agent / MB,
            supervisorBefore: before.supervisor / MB,
            supervisorAfter: after.supervisor / MB,
          },
          overheadMBPerTask: perTask,
          goalMBPerTask: GOAL_MB_PER_TASK,
          met,
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    await agent.stop();
  }
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
