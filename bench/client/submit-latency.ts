/**
 * Submit → running benchmark: registers a one-task job N times (`--runs`, default 30, each a new
 * job ID) through PUT /v1/jobs and times each from the request until the event stream reports the
 * allocation with ClientStatus "running" — once with a raw_exec task (goal: median ≤ 50 ms,
 * GOALS.md) and once with an exec task, sandbox and cgroups included (goal: median ≤ 30 ms,
 * issue 10). Prints median/p95 beside each goal with a breakdown (register acknowledged, alloc
 * placed, running), and writes bench/results/client-latency.json.
 *
 *   npm run build && node dist/bench/client/submit-latency.js [--runs 30] [--addr http://127.0.0.1:4646]
 *
 * Without --addr it starts its own `caravan agent -dev` on a temporary data dir.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startBenchAgent, type BenchAgent } from '../dev-agent.js';
import { eventBatches, type BenchEvent } from '../event-batches.js';
import { percentile } from '../percentile.js';

const GOAL_MEDIAN_MS: Record<Driver, number> = { raw_exec: 50, exec: 30 };
type Driver = 'raw_exec' | 'exec';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** One measured submission: milliseconds from the PUT to each milestone. */
interface Sample {
  registeredMs: number;
  placedMs: number;
  runningMs: number;
}

/** Allocation events from one long-lived event stream, dispatched to per-job waiters. */
class AllocWatch {
  private readonly waiters = new Map<string, { placed?: number; onPlaced: (t: number) => void; onRunning: (t: number) => void }>();
  private readonly ac = new AbortController();

  async open(addr: string): Promise<void> {
    const res = await fetch(`${addr}/v1/event/stream?topic=Allocation:*`, { signal: this.ac.signal });
    if (!res.ok || !res.body) throw new Error(`event stream: ${res.status}`);
    void this.pump(res.body);
  }

  /** Resolves the times (performance.now) at which the job's alloc was placed and running. */
  expect(jobId: string): { placed: Promise<number>; running: Promise<number> } {
    let onPlaced!: (t: number) => void;
    let onRunning!: (t: number) => void;
    const placed = new Promise<number>((r) => (onPlaced = r));
    const running = new Promise<number>((r) => (onRunning = r));
    this.waiters.set(jobId, { onPlaced, onRunning });
    return { placed, running };
  }

  close(): void {
    this.ac.abort();
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const { events, at } of eventBatches(body)) for (const e of events) this.dispatch(e, at);
    } catch {
      // aborted at the end of the run
    }
  }

  private dispatch(e: BenchEvent, now: number): void {
    const a = e.Payload.Allocation;
    if (!a) return;
    const w = this.waiters.get(a.JobID);
    if (!w) return;
    if (w.placed === undefined) {
      w.placed = now;
      w.onPlaced(now);
    }
    if (a.ClientStatus === 'running') {
      this.waiters.delete(a.JobID);
      w.onRunning(now);
    }
  }
}

function jobBody(id: string, driver: Driver): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Datacenters: ['*'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: driver, Config: { command: '/bin/sleep', args: ['3600'] }, Resources: { CPU: 20, MemoryMB: 16 } }] }],
    },
  };
}


async function submitOnce(addr: string, watch: AllocWatch, jobId: string, driver: Driver): Promise<Sample> {
  const expect = watch.expect(jobId);
  const t0 = performance.now();
  const res = await fetch(`${addr}/v1/jobs`, { method: 'PUT', body: JSON.stringify(jobBody(jobId, driver)), headers: { 'Content-Type': 'application/json' } });
  const registered = performance.now();
  if (!res.ok) throw new Error(`register ${jobId}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${jobId} not running after 30 s`)), 30_000).unref());
  const [placed, running] = await Promise.race([Promise.all([expect.placed, expect.running]), timeout]);
  return { registeredMs: registered - t0, placedMs: placed - t0, runningMs: running - t0 };
}

async function main(): Promise<void> {
  const runs = Number(arg('runs') ?? '30');
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got "${arg('runs')}"`);
  const given = arg('addr');
  let agent: BenchAgent | undefined;
  const addr = given ?? (agent = await startBenchAgent()).address;
  const watch = new AllocWatch();
  const jobs: string[] = [];
  try {
    await watch.open(addr);
    const fmt = (v: number) => `${v.toFixed(1)} ms`;
    const results: Record<string, unknown> = {};
    for (const driver of ['raw_exec', 'exec'] as const) {
      // Two warm-up submissions (JIT, first spawn of the supervisor), not counted.
      const samples: Sample[] = [];
      for (let i = 0; i < runs + 2; i++) {
        const jobId = `bench-latency-${driver}-${process.pid}-${i}`;
        jobs.push(jobId);
        const s = await submitOnce(addr, watch, jobId, driver);
        if (i >= 2) samples.push(s);
      }
      const pick = (k: keyof Sample) => samples.map((s) => s[k]).sort((a, b) => a - b);
      const running = pick('runningMs');
      const median = percentile(running, 50);
      const p95 = percentile(running, 95);
      const goal = GOAL_MEDIAN_MS[driver];
      console.log(`${driver}: submit → running over ${samples.length} runs: median ${fmt(median)}, p95 ${fmt(p95)} (goal: median ≤ ${goal} ms) ${median <= goal ? 'MET' : 'NOT MET'}`);
      console.log(`  breakdown (medians): register acknowledged ${fmt(percentile(pick('registeredMs'), 50))}, alloc placed ${fmt(percentile(pick('placedMs'), 50))}, running ${fmt(median)}`);
      results[driver] = {
        runs: samples.length,
        medianMs: median,
        p95Ms: p95,
        goalMedianMs: goal,
        met: median <= goal,
        breakdownMedianMs: { registered: percentile(pick('registeredMs'), 50), placed: percentile(pick('placedMs'), 50), running: median },
      };
      // Stop this driver's jobs before the next: the node's capacity is not the subject here.
      for (const id of jobs.splice(0)) await fetch(`${addr}/v1/job/${id}?purge=true`, { method: 'DELETE' }).catch(() => undefined);
    }
    const out = join(process.cwd(), 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, 'client-latency.json'),
      JSON.stringify({ ...(results['raw_exec'] as object), exec: results['exec'], agent: given ? 'external' : 'dev (started by the benchmark)' }, null, 2) + '\n',
    );
  } finally {
    watch.close();
    for (const id of jobs) await fetch(`${addr}/v1/job/${id}?purge=true`, { method: 'DELETE' }).catch(() => undefined);
    await agent?.stop();
  }
}

main().catch((err: unknown) => {
  console.error((err as Error).message);
  process.exit(1);
});
