/**
 * Exec round trip benchmark (GOALS.md: open → exit frame of `echo hi` over the exec websocket,
 * median ≤ 2 ms, measured without and with a terminal; sessions back to back, and also spaced
 * 10 ms apart as a client's executions come one at a time) and event-stream latency (job registration → AllocationUpdated with
 * ClientStatus "running").
 *
 * Usage: node dist/bench/exec/exec-latency.js [ADDR] [-n N] [-e E] [--self]
 *   ADDR (or CARAVAN_ADDR / NOMAD_ADDR): a running agent with a running allocation. Without an
 *   address the benchmark starts its own `caravan agent -dev`, runs a long-sleep raw_exec batch
 *   job on it (as Poseidon's runners) and measures against that. -e: event-stream samples
 *   (default 5). --self: no agent; serves exec in-process from a temp directory (the exec path
 *   alone, without the event-stream part).
 * Writes bench/results/exec.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runExecSession } from '../../src/cli/commands/alloc-exec-session.js';
import type { ClientHttpApi } from '../../src/http/client-http-api.js';
import { createHttpServer } from '../../src/http/http-server.js';
import type { Allocation } from '../../src/structs/alloc.js';
import { startBenchAgent } from '../dev-agent.js';
import { startFloorServer, type FloorKind } from './exec-floor.js';
import { eventBatches } from '../event-batches.js';
import { percentile } from '../percentile.js';

/** GOALS.md: exec round trip median ≤ 2 ms, with a terminal and without. */
const GOAL_EXEC_MS = 2;
/** Issue 10: the same round trip into a sandboxed `exec` task (nsenter + cgroup join on the way). */
const GOAL_EXEC_SANDBOX_MS = 10;
/** GOALS.md's submit → running goal, the nearest stated figure for register → running event. */
const GOAL_RUNNING_MS = 50;

interface Args {
  addr: string | undefined;
  n: number;
  events: number;
  self: boolean;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { addr: process.env.CARAVAN_ADDR || process.env.NOMAD_ADDR || undefined, n: 50, events: 5, self: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-n' || a === '--n') out.n = Number(argv[++i]);
    else if (a === '-e' || a === '--e') out.events = Number(argv[++i]);
    else if (a === '--self') out.self = true;
    else out.addr = /^https?:\/\//.test(a) ? a : `http://${a}`;
  }
  if (!Number.isInteger(out.n) || out.n < 1) throw new Error('-n must be a positive integer');
  if (!Number.isInteger(out.events) || out.events < 0) throw new Error('-e must be a non-negative integer');
  return out;
}


async function getJson<T>(addr: string, path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(addr + path, init);
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Starts an in-process agent whose only allocation execs in a temp directory. */
async function selfAgent(): Promise<{ addr: string; allocId: string; task: string; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-bench-exec-'));
  mkdirSync(join(dir, 'web'));
  const allocId = 'bench-alloc';
  const client: ClientHttpApi = {
    nodeId: () => 'bench-node',
    hasAlloc: (id) => id === allocId,
    allocDir: (id) => (id === allocId ? dir : undefined),
    execSpec: (_id, _task, command) => ({ file: command[0]!, args: command.slice(1), cwd: join(dir, 'web'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }),
    taskDriverCapabilities: () => ({ fsIsolation: 'none' }),
    restartAlloc: async () => {},
    signalAlloc: async () => {},
    allocStats: async () => ({}),
    hostStats: () => {
      throw new Error('not measured here');
    },
    collectAlloc: async () => {},
    collectAllAllocs: async () => 0,
    nodeMeta: () => ({ Meta: {}, Dynamic: {}, Static: {} }),
    applyNodeMeta: async () => ({ Meta: {}, Dynamic: {}, Static: {} }),
  };
  const app = createHttpServer({ client });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const a = app.server.address() as { port: number };
  return { addr: `http://127.0.0.1:${a.port}`, allocId, task: 'web', close: async () => { await app.close(); rmSync(dir, { recursive: true, force: true }); } };
}

/** Quiet time between spaced sessions: enough for the agent to go idle between them. */
const SPACED_GAP_MS = 10;

async function measureExec(addr: string, allocId: string, task: string, n: number, tty: boolean, gapMs = 0): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n + 3; i++) {
    if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
    const t0 = performance.now();
    const code = await runExecSession({ address: addr, allocId, task, command: ['echo', 'hi'], tty });
    const ms = performance.now() - t0;
    if (code !== 0) throw new Error(`echo hi exited ${code}`);
    if (i >= 3) samples.push(ms); // the first sessions warm up the connection paths
  }
  return samples.sort((a, b) => a - b);
}

/** Median of `echo hi` sessions (no tty) against a bare server of `kind`: back to back, then spaced. */
async function measureFloor(kind: FloorKind, n: number): Promise<{ backToBackMs: number; spacedMs: number }> {
  const floor = await startFloorServer(kind);
  try {
    const medians: number[] = [];
    for (const gap of [0, SPACED_GAP_MS]) {
      await floor.prefork(n + 3);
      medians.push(percentile(await measureExec(floor.address, 'floor', 'floor', n, false, gap), 50));
    }
    return { backToBackMs: medians[0]!, spacedMs: medians[1]! };
  } finally {
    await floor.close();
  }
}

/** Registers a raw_exec job and times the event stream's report of its running allocation. */
async function measureEventLatency(addr: string, seq: number): Promise<number | undefined> {
  const jobId = `bench-exec-events-${process.pid}-${seq}`;
  const ac = new AbortController();
  const res = await fetch(`${addr}/v1/event/stream?topic=Allocation:*`, { signal: ac.signal });
  if (!res.ok || !res.body) return undefined;
  const job = {
    Job: {
      ID: jobId, Name: jobId, Type: 'service', Datacenters: ['dc1'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['3600'] }, Resources: { CPU: 50, MemoryMB: 32 } }] }],
    },
  };
  const t0 = performance.now();
  await getJson(addr, '/v1/jobs', { method: 'PUT', body: JSON.stringify(job), headers: { 'Content-Type': 'application/json' } });
  let latency: number | undefined;
  const deadline = setTimeout(() => ac.abort(), 30_000);
  try {
    for await (const { events, at } of eventBatches(res.body)) {
      const a = events.find((e) => e.Type === 'AllocationUpdated' && e.Payload.Allocation?.JobID === jobId && e.Payload.Allocation.ClientStatus === 'running');
      if (a) {
        latency = at - t0;
        break;
      }
    }
  } catch {
    // timed out
  } finally {
    clearTimeout(deadline);
    ac.abort();
    await fetch(`${addr}/v1/job/${jobId}?purge=true`, { method: 'DELETE' }).catch(() => undefined);
  }
  return latency;
}

/** Runs a Poseidon-style runner (a batch job sleeping "forever") and resolves its allocation. */
async function startRunner(addr: string, driver = 'raw_exec'): Promise<{ allocId: string; task: string }> {
  const id = driver === 'raw_exec' ? 'bench-exec-runner' : `bench-exec-runner-${driver}`;
  const job = {
    Job: {
      ID: id, Name: id, Type: 'batch', Datacenters: ['dc1'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: driver, Config: { command: '/bin/sleep', args: ['1000000'] }, Resources: { CPU: 50, MemoryMB: 32 } }] }],
    },
  };
  await getJson(addr, '/v1/jobs', { method: 'PUT', body: JSON.stringify(job), headers: { 'Content-Type': 'application/json' } });
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    const allocs = await getJson<{ ID: string; ClientStatus: string }[]>(addr, `/v1/job/${id}/allocations`);
    const running = allocs.find((a) => a.ClientStatus === 'running');
    if (running) return { allocId: running.ID, task: 't' };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the runner job did not start within 20 s');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  let addr = args.addr ?? '';
  let allocId: string;
  let task: string;
  let close = async () => {};
  let mode: 'self' | 'dev-agent' | 'agent' = 'agent';
  if (args.self) {
    mode = 'self';
    const s = await selfAgent();
    ({ addr, allocId, task, close } = s);
  } else if (!args.addr) {
    mode = 'dev-agent';
    const agent = await startBenchAgent();
    addr = agent.address;
    close = () => agent.stop();
    try {
      ({ allocId, task } = await startRunner(addr));
    } catch (err) {
      await close();
      throw err;
    }
  } else {
    const allocs = await getJson<Allocation[]>(addr, '/v1/allocations');
    const running = allocs.find((a) => a.ClientStatus === 'running' && Object.values(a.TaskStates ?? {}).some((t) => t.State === 'running'));
    if (!running) throw new Error(`no running allocation at ${addr}: start a job first`);
    allocId = running.ID;
    task = Object.entries(running.TaskStates ?? {}).find(([, t]) => t.State === 'running')![0];
  }
  try {
    // Interleaved, so load on the machine weighs on both alike.
    const pipes: number[] = [];
    const ttys: number[] = [];
    const spaced: number[] = [];
    const spacedTtys: number[] = [];
    for (let round = 0; round < args.n; round += 10) {
      const k = Math.min(10, args.n - round);
      pipes.push(...(await measureExec(addr, allocId, task, k, false)));
      ttys.push(...(await measureExec(addr, allocId, task, k, true)));
      spaced.push(...(await measureExec(addr, allocId, task, k, false, SPACED_GAP_MS)));
      spacedTtys.push(...(await measureExec(addr, allocId, task, k, true, SPACED_GAP_MS)));
    }
    spaced.sort((a, b) => a - b);
    spacedTtys.sort((a, b) => a - b);
    const samples = pipes.sort((a, b) => a - b);
    ttys.sort((a, b) => a - b);
    const median = percentile(samples, 50);
    const p95 = percentile(samples, 95);
    const ttyMedian = percentile(ttys, 50);
    const ttyP95 = percentile(ttys, 95);
    const verdict = (m: number) => `goal: median ≤ ${GOAL_EXEC_MS} ms ${m <= GOAL_EXEC_MS ? '(met)' : '(NOT met)'}`;
    console.log(`exec echo hi, open → exit frame, no tty (${samples.length} runs): median ${median.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms — ${verdict(median)}`);
    console.log(`exec echo hi, open → exit frame, tty    (${ttys.length} runs): median ${ttyMedian.toFixed(2)} ms, p95 ${ttyP95.toFixed(2)} ms — ${verdict(ttyMedian)}`);
    // Sessions back to back (above) measure an agent kept busy by the previous session's tail;
    // spaced ones, the latency a client sees when its executions come one at a time.
    console.log(`exec echo hi, sessions ${SPACED_GAP_MS} ms apart, no tty (${spaced.length} runs): median ${percentile(spaced, 50).toFixed(2)} ms, p95 ${percentile(spaced, 95).toFixed(2)} ms`);
    console.log(`exec echo hi, sessions ${SPACED_GAP_MS} ms apart, tty    (${spacedTtys.length} runs): median ${percentile(spacedTtys, 50).toFixed(2)} ms, p95 ${percentile(spacedTtys, 95).toFixed(2)} ms`);
    // Into an exec-driver sandbox too, when the benchmark runs its own agent.
    let sandbox: { medianMs: number; p95Ms: number; runs: number; goalMedianMs: number; met: boolean } | null = null;
    if (mode === 'dev-agent') {
      const runner = await startRunner(addr, 'exec');
      const ss = (await measureExec(addr, runner.allocId, runner.task, args.n, false)).sort((a, b) => a - b);
      const m = percentile(ss, 50);
      sandbox = { medianMs: m, p95Ms: percentile(ss, 95), runs: ss.length, goalMedianMs: GOAL_EXEC_SANDBOX_MS, met: m <= GOAL_EXEC_SANDBOX_MS };
      console.log(`exec into an exec-driver sandbox, open → exit frame (${ss.length} runs): median ${m.toFixed(2)} ms, p95 ${sandbox.p95Ms.toFixed(2)} ms — goal: median ≤ ${GOAL_EXEC_SANDBOX_MS} ms ${sandbox.met ? '(met)' : '(NOT met)'}`);
    }
    // The same client against one bare Node process: what this machine allows (exec-floor.ts).
    const floor: Record<FloorKind, { backToBackMs: number; spacedMs: number }> = {
      none: await measureFloor('none', args.n),
      preforked: await measureFloor('preforked', args.n),
      spawned: await measureFloor('spawned', args.n),
    };
    const pair = (f: { backToBackMs: number; spacedMs: number }) => `${f.backToBackMs.toFixed(2)} / ${f.spacedMs.toFixed(2)} ms`;
    console.log(`floor on this machine, one bare Node process, no tty (back to back / ${SPACED_GAP_MS} ms apart): websocket alone ${pair(floor.none)}; echo on a shell forked ahead ${pair(floor.preforked)}; echo spawned per session ${pair(floor.spawned)}`);
    const eventSamples: number[] = [];
    let missed = 0;
    for (let i = 0; !args.self && i < args.events; i++) {
      const ms = await measureEventLatency(addr, i);
      if (ms === undefined) missed++;
      else eventSamples.push(ms);
    }
    eventSamples.sort((a, b) => a - b);
    const eventMedian = eventSamples.length > 0 ? percentile(eventSamples, 50) : undefined;
    if (!args.self && args.events > 0) {
      const figure = eventMedian === undefined ? 'not observed' : `median ${eventMedian.toFixed(1)} ms, max ${eventSamples[eventSamples.length - 1]!.toFixed(1)} ms (${eventSamples.length} runs${missed ? `, ${missed} not observed` : ''})`;
      console.log(`event stream: job register → AllocationUpdated running: ${figure} — goal (submit → running): median ≤ ${GOAL_RUNNING_MS} ms ${eventMedian !== undefined && eventMedian <= GOAL_RUNNING_MS ? '(met)' : '(NOT met)'}`);
    }
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(
      'bench/results/exec.json',
      JSON.stringify(
        {
          mode,
          runs: samples.length,
          medianMs: median,
          p95Ms: p95,
          goalMedianMs: GOAL_EXEC_MS,
          met: median <= GOAL_EXEC_MS,
          ttyMedianMs: ttyMedian,
          ttyP95Ms: ttyP95,
          ttyMet: ttyMedian <= GOAL_EXEC_MS,
          spacedGapMs: SPACED_GAP_MS,
          spacedMedianMs: percentile(spaced, 50),
          spacedP95Ms: percentile(spaced, 95),
          spacedTtyMedianMs: percentile(spacedTtys, 50),
          spacedTtyP95Ms: percentile(spacedTtys, 95),
          eventRunningLatencyMs: eventMedian ?? null,
          eventRunningSamplesMs: eventSamples,
          eventRunningGoalMs: GOAL_RUNNING_MS,
          eventRunningMet: eventMedian !== undefined && eventMedian <= GOAL_RUNNING_MS,
          execDriverSandbox: sandbox,
          floor,
        },
        null,
        2,
      ) + '\n',
    );
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
