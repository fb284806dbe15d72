/**
 * Docker driver benchmark: submit → running of one docker task (goal: median ≤ 250 ms) beside
 * `docker run --rm --network none -m 64m … echo hi` on the same engine, and the exec round trip
 * into a running container (`echo hi`, open → exit frame; goal: median ≤ 30 ms), through the
 * container's resident exec shell once it is up (it says which path the round trips took). For where the
 * time goes it also times the Engine's own exec alone, and step by step (create, start's hijack,
 * first output, end of stream, inspect for the exit code).
 *
 *   npm run build && node dist/bench/docker/docker-latency.js [--runs 20] [--execs 50]
 *
 * Starts its own private dockerd (busybox image imported from Debian's busybox-static) and a
 * `caravan agent -dev` pointed at it; stops both. Writes bench/results/docker.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runExecSession } from '../../src/cli/commands/alloc-exec-session.js';
import type { Allocation } from '../../src/structs/index.js';
import { startContainerExec } from '../../src/drivers/docker/container-exec.js';
import { EngineClient } from '../../src/drivers/docker/engine-client.js';
import { BUSYBOX_IMAGE, importBusybox, listContainers, startPrivateDockerd, type PrivateDockerd } from '../../test/drivers/private-dockerd.js';
import { startBenchAgent, type BenchAgent } from '../dev-agent.js';
import { eventBatches } from '../event-batches.js';
import { percentile } from '../percentile.js';

const GOAL_RUNNING_MS = 250;
const GOAL_EXEC_MS = 30;

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const n = i >= 0 ? Number(process.argv[i + 1]) : def;
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}


function stats(samples: number[]): { median: number; p95: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { median: percentile(s, 50), p95: percentile(s, 95), n: s.length };
}

function dockerJob(id: string, cmd: string[]): Record<string, unknown> {
  return {
    ID: id, Name: id, Type: 'batch', Datacenters: ['dc1'],
    TaskGroups: [{
      Name: 'g', Count: 1,
      Tasks: [{
        Name: 't', Driver: 'docker', Config: { image: BUSYBOX_IMAGE, command: cmd[0], args: cmd.slice(1), network_mode: 'none' },
        KillSignal: 'SIGKILL', KillTimeout: 0, LogConfig: { MaxFiles: 1, MaxFileSizeMB: 1 }, Resources: { CPU: 50, MemoryMB: 64 },
      }],
    }],
  };
}

/** Times PUT /v1/jobs → the event stream's AllocationUpdated with ClientStatus "running". */
async function submitToRunning(addr: string, jobId: string): Promise<number> {
  const ac = new AbortController();
  const res = await fetch(`${addr}/v1/event/stream?topic=Allocation:*`, { signal: ac.signal });
  if (!res.ok || !res.body) throw new Error(`event stream: ${res.status}`);
  const t0 = performance.now();
  const put = await fetch(`${addr}/v1/jobs`, { method: 'PUT', body: JSON.stringify({ Job: dockerJob(jobId, ['sleep', 'infinity']) }), headers: { 'Content-Type': 'application/json' } });
  if (!put.ok) throw new Error(`register: ${put.status} ${await put.text()}`);
  const deadline = setTimeout(() => ac.abort(), 30_000);
  try {
    for await (const { events, at } of eventBatches(res.body)) {
      for (const e of events) {
        const a = e.Payload.Allocation;
        if (a?.JobID === jobId && a.ClientStatus === 'running') return at - t0;
        if (a?.JobID === jobId && a.ClientStatus === 'failed') throw new Error(`${jobId} failed: ${JSON.stringify(a.TaskStates)}`);
      }
    }
    throw new Error(`${jobId} never reported running`);
  } finally {
    clearTimeout(deadline);
    ac.abort();
  }
}

/** Per-step times (ms from the start) of one Engine exec of `echo hi`, as container-exec.ts does it. */
async function engineExecSteps(engine: EngineClient, containerId: string): Promise<Record<string, number>> {
  const t0 = performance.now();
  const created = await engine.json<{ Id: string }>({ method: 'POST', path: `/containers/${containerId}/exec`, body: { AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false, Cmd: ['echo', 'hi'] } });
  const create = performance.now() - t0;
  const s = await engine.hijack({ method: 'POST', path: `/exec/${created.Id}/start`, body: { Detach: false, Tty: false } });
  const hijack = performance.now() - t0;
  s.end();
  let firstOutput = 0;
  await new Promise<void>((resolve) => {
    s.on('data', () => (firstOutput ||= performance.now() - t0));
    s.on('close', () => resolve());
    s.on('error', () => resolve());
  });
  const closed = performance.now() - t0;
  await engine.json({ method: 'GET', path: `/exec/${created.Id}/json` });
  return { create, hijack, firstOutput, closed, inspected: performance.now() - t0 };
}

async function purge(addr: string, jobId: string): Promise<void> {
  await fetch(`${addr}/v1/job/${jobId}?purge=true`, { method: 'DELETE' });
}

/** `docker run` itself on the same engine, with Docker's CLI when it is installed. */
function dockerRunBaseline(d: PrivateDockerd, runs: number): number[] | null {
  const cli = spawnSync('sh', ['-c', 'command -v docker'], { encoding: 'utf8' }).stdout.trim();
  if (!cli) return null;
  const out: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const t0 = performance.now();
    const r = spawnSync(cli, ['-H', d.endpoint, 'run', '--rm', '--network', 'none', '-m', '64m', BUSYBOX_IMAGE, 'echo', 'hi'], { encoding: 'utf8' });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`docker run failed: ${r.stderr}`);
    if (i > 0) out.push(ms);
  }
  return out;
}

/**
 * Whether an exec through the agent runs under the container's resident shell: the command's
 * parent is then a process of the container, while the Engine's exec starts it from runc,
 * outside the container's pid namespace ($PPID 0).
 */
async function viaResidentShell(address: string, allocId: string): Promise<boolean> {
  let out = '';
  await runExecSession({ address, allocId, task: 't', command: ['sh', '-c', 'echo $PPID'], tty: false }, { stdout: (d) => (out += d.toString()) });
  return out.trim() !== '' && out.trim() !== '0';
}

/** Waits (up to 10 s) until the container runs its resident exec shell (the loop that printed READY). */
async function waitResidentShell(engine: EngineClient, containerId: string): Promise<boolean> {
  const probe = ['sh', '-c', 'for p in /proc/[0-9]*; do grep -q "e[c]ho READY" $p/cmdline 2>/dev/null && grep -q "^PPid:.0$" $p/status && echo up; done; true'];
  for (let i = 0; i < 50; i++) {
    let out = '';
    await new Promise<void>((resolve) => startContainerExec(engine, containerId, probe, false, { onOutput: (_s, b) => (out += b.toString()), onExit: () => resolve() }));
    if (out.includes('up')) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

async function main(): Promise<void> {
  const runs = arg('runs', 20);
  const execs = arg('execs', 50);
  const dockerd = await startPrivateDockerd();
  const confDir = mkdtempSync(join(tmpdir(), 'caravan-bench-docker-'));
  let agent: BenchAgent | undefined;
  try {
    await importBusybox(dockerd);
    writeFileSync(join(confDir, 'docker.hcl'), `plugin "docker" {\n  config {\n    endpoint = "${dockerd.endpoint}"\n    gc {\n      image = false\n    }\n  }\n}\n`);
    agent = await startBenchAgent(['-config', join(confDir, 'docker.hcl')]);
    const addr = agent.address;

    const running: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const id = `bench-docker-${i}`;
      const ms = await submitToRunning(addr, id);
      if (i > 0) running.push(ms); // the first run warms the agent's paths
      await purge(addr, id);
    }
    const baseline = dockerRunBaseline(dockerd, Math.min(runs, 10));

    const runnerId = 'bench-docker-runner';
    await submitToRunning(addr, runnerId);
    const allocs = (await (await fetch(`${addr}/v1/job/${runnerId}/allocations`)).json()) as Allocation[];
    const allocId = allocs.find((a) => a.ClientStatus === 'running')!.ID;
    const container = (await listContainers(dockerd)).find((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === allocId)!;
    const engine = new EngineClient({ socketPath: dockerd.socket });
    // The driver starts the container's resident exec shell (the fast path) in the background:
    // wait until it runs, and check before and after the round trips which path they took.
    const shellUp = await waitResidentShell(engine, container.Id);
    const shellBefore = await viaResidentShell(addr, allocId);
    const execSamples: number[] = [];
    for (let i = 0; i < execs + 3; i++) {
      const t0 = performance.now();
      const code = await runExecSession({ address: addr, allocId, task: 't', command: ['echo', 'hi'], tty: false });
      const ms = performance.now() - t0;
      if (code !== 0) throw new Error(`echo hi exited ${code}`);
      if (i >= 3) execSamples.push(ms);
    }
    const shellAfter = await viaResidentShell(addr, allocId);
    const path = shellBefore && shellAfter ? 'the resident shell (fast path; checked before and after)' : shellBefore || shellAfter ? 'the resident shell for some, the Engine\'s exec for others' : 'the Engine\'s exec';
    // The engine's own exec (create, start on a hijacked connection, inspect), without Caravan's
    // websocket in front: what the Engine exec path cannot go below on this machine.
    const engineSamples: number[] = [];
    for (let i = 0; i < execs + 3; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => startContainerExec(engine, container.Id, ['echo', 'hi'], false, { onOutput: () => undefined, onExit: () => resolve() }));
      if (i >= 3) engineSamples.push(performance.now() - t0);
    }
    const stepNames = ['create', 'hijack', 'firstOutput', 'closed', 'inspected'];
    const steps: Record<string, number[]> = Object.fromEntries(stepNames.map((n) => [n, []]));
    for (let i = 0; i < Math.min(execs, 20) + 3; i++) {
      const st = await engineExecSteps(engine, container.Id);
      if (i >= 3) for (const n of stepNames) steps[n]!.push(st[n]!);
    }
    engine.close();
    await purge(addr, runnerId);

    const r = stats(running);
    const e = stats(execSamples);
    const b = baseline ? stats(baseline) : null;
    console.log(`docker submit → running (${r.n} runs): median ${r.median.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms — goal: median ≤ ${GOAL_RUNNING_MS} ms ${r.median <= GOAL_RUNNING_MS ? '(met)' : '(NOT met)'}`);
    console.log(b ? `docker run --rm --network none -m 64m echo hi, same engine (${b.n} runs): median ${b.median.toFixed(1)} ms, p95 ${b.p95.toFixed(1)} ms` : 'docker CLI not installed: no docker run baseline');
    console.log(`exec round trips ran through ${path}${shellUp ? '' : '; the resident shell did not come up'}`);
    console.log(`exec echo hi into the container, open → exit frame (${e.n} runs): median ${e.median.toFixed(1)} ms, p95 ${e.p95.toFixed(1)} ms — goal: median ≤ ${GOAL_EXEC_MS} ms ${e.median <= GOAL_EXEC_MS ? '(met)' : '(NOT met)'}`);
    const en = stats(engineSamples);
    console.log(`the engine's exec alone (create + start + inspect, no websocket; ${en.n} runs): median ${en.median.toFixed(1)} ms, p95 ${en.p95.toFixed(1)} ms`);
    console.log(`  its steps, median ms from the start: ${stepNames.map((n) => `${n} ${stats(steps[n]!).median.toFixed(1)}`).join(', ')}`);
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/docker.json', JSON.stringify({ submitToRunning: { ...r, goalMedianMs: GOAL_RUNNING_MS }, dockerRun: b, exec: { ...e, goalMedianMs: GOAL_EXEC_MS, path }, engineExec: en, engineExecSteps: Object.fromEntries(stepNames.map((n) => [n, stats(steps[n]!).median])), at: new Date().toISOString() }, null, 2));
  } finally {
    await agent?.stop();
    await dockerd.stop();
    rmSync(confDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
