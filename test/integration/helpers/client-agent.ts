/**
 * Helpers for client integration tests against a real `caravan agent -dev`: a short data dir
 * (the supervisor's unix socket path must stay under 107 bytes), job submission from HCL text,
 * polling for allocation state, and finding/killing the real task processes through /proc.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Allocation, TaskState } from '../../../src/structs/index.js';
import { api, runCli, startAgent, type AgentProcess } from './agent-process.js';
import { killDataDirProcesses } from './processes.js';

export { killDataDirProcesses, pidAlive, taskPids } from './processes.js';

/** A service job of `count` raw_exec tasks that sleep, with no deployment to wait on (update max_parallel 0). */
export function sleeperJobHcl(id: string, count: number): string {
  return `job "${id}" {
  datacenters = ["*"]
  group "g" {
    count = ${count}
    update {
      max_parallel = 0
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`;
}

/** A dev agent whose data dir lives under /tmp/cv-XXXXXX (short socket paths). */
export async function startDevAgent(opts: { dataDir?: string; port?: number } = {}): Promise<AgentProcess> {
  const dataDir = opts.dataDir ?? (await mkdtemp('/tmp/cv-'));
  return startAgent({ roleArgs: ['-dev'], dataDir, ...(opts.port !== undefined ? { port: opts.port } : {}) });
}

/** Polls `probe` every `everyMs` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
}

/** Writes `hcl` to a file in `dir` and runs `caravan job run -detach` on it; asserts success. */
export async function runJob(address: string, dir: string, name: string, hcl: string): Promise<void> {
  const file = join(dir, `${name}.hcl`);
  await writeFile(file, hcl);
  const res = await runCli(address, ['job', 'run', '-detach', file]);
  if (res.code !== 0) throw new Error(`job run ${name} failed (${res.code}):\n${res.stdout}\n${res.stderr}`);
}

/** The job's allocation stubs. */
export async function jobAllocs(address: string, jobId: string): Promise<AllocListStub[]> {
  const res = await api<AllocListStub[]>(address, 'GET', `/v1/job/${encodeURIComponent(jobId)}/allocations`);
  if (res.status !== 200) throw new Error(`allocations of ${jobId}: ${res.status} ${res.text}`);
  return res.body;
}

/** One full allocation. */
export async function getAlloc(address: string, allocId: string): Promise<Allocation> {
  const res = await api<Allocation>(address, 'GET', `/v1/allocation/${allocId}`);
  if (res.status !== 200) throw new Error(`allocation ${allocId}: ${res.status} ${res.text}`);
  return res.body;
}

/** The state of one task of an allocation (throws when the client has not reported it yet). */
export function taskState(alloc: Allocation | AllocListStub, task: string): TaskState {
  const st = alloc.TaskStates?.[task];
  if (!st) throw new Error(`alloc ${alloc.ID} has no state for task ${task}`);
  return st;
}

/** Event types of a task state, in order. */
export function eventTypes(st: TaskState): string[] {
  return st.Events.map((e) => e.Type);
}

/** Waits until `n` allocations of the job have every listed task running; resolves them. */
export async function waitRunning(address: string, jobId: string, n: number, timeoutMs = 20_000): Promise<AllocListStub[]> {
  return waitFor(`${n} running allocations of ${jobId}`, async () => {
    const running = (await jobAllocs(address, jobId)).filter((a) => a.ClientStatus === 'running' && a.DesiredStatus === 'run');
    return running.length === n ? running : undefined;
  }, timeoutMs);
}

/** Stops (SIGTERM) the agent, kills anything left of its data dir, and removes the data dir. */
export async function teardown(agent: AgentProcess | undefined, dataDir: string): Promise<void> {
  if (agent && agent.proc.exitCode === null && agent.proc.signalCode === null) await agent.stop();
  await killDataDirProcesses(dataDir);
  await rm(dataDir, { recursive: true, force: true });
}
