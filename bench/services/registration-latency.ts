/**
 * Native service registration latency: for N jobs (`--runs`, default 20), each with one raw_exec
 * task and a `provider = "nomad"` service, times (1) from the event stream reporting the
 * allocation running to a blocking `GET /v1/service/:name`, started before the job, answering
 * the instance — goal: median ≤ 100 ms (issue 28); and (2) from the job's stop request to the
 * blocking query answering the empty list — goal: median ≤ 100 ms. Both sides are seen by this
 * process, so clock skew does not enter. Prints median/p95 beside each goal and writes
 * bench/results/service-latency.json.
 *
 *   npm run build && node dist/bench/services/registration-latency.js [--runs 20] [--addr http://127.0.0.1:4646]
 *
 * Without --addr it starts its own `caravan agent -dev`. Against a Nomad agent (`--addr`), the
 * same client measures Nomad's figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startBenchAgent, type BenchAgent } from '../dev-agent.js';
import type { Allocation } from '../../src/structs/alloc.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';
import { percentile } from '../percentile.js';

const GOAL_MS = 100;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const hcl = (id: string): string => `
job "${id}" {
  datacenters = ["*"]
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "${id}"
      provider = "nomad"
      port     = "http"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;

/** The first time (performance.now) the event stream reports each job's allocation running. */
class RunningWatch {
  private readonly seen = new Map<string, number>();
  private readonly waiters = new Map<string, (t: number) => void>();
  private readonly ac = new AbortController();

  async open(addr: string): Promise<void> {
    const res = await fetch(`${addr}/v1/event/stream?topic=Allocation:*`, { signal: this.ac.signal });
    if (!res.ok || !res.body) throw new Error(`event stream: ${res.status}`);
    // Frames may arrive back to back without a newline between them: decode them as JSON values.
    const frames = new JsonFrameDecoder();
    const reader = res.body.getReader();
    const text = new TextDecoder();
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          const at = performance.now();
          for (const batch of frames.pushParsed<{ Events?: { Payload: { Allocation?: Allocation } }[] }>(text.decode(value, { stream: true }))) {
            for (const e of batch.Events ?? []) {
              const a = e.Payload.Allocation;
              if (!a || a.ClientStatus !== 'running' || this.seen.has(a.JobID)) continue;
              this.seen.set(a.JobID, at);
              this.waiters.get(a.JobID)?.(at);
            }
          }
        }
      } catch {
        // closed
      }
    })();
  }

  running(jobId: string): Promise<number> {
    const t = this.seen.get(jobId);
    return t !== undefined ? Promise.resolve(t) : new Promise((r) => this.waiters.set(jobId, r));
  }

  close(): void {
    this.ac.abort();
  }
}

/** Resolves the time a blocking query on the service answers a list of `want` instances. */
async function blockUntil(addr: string, name: string, want: number): Promise<number> {
  let index = 1;
  for (;;) {
    const res = await fetch(`${addr}/v1/service/${name}?index=${index}&wait=30s`);
    const at = performance.now();
    const body = (await res.json()) as unknown[];
    if (!res.ok) throw new Error(`GET /v1/service/${name}: ${res.status}`);
    if (body.length === want) return at;
    index = Number(res.headers.get('X-Nomad-Index') ?? index);
  }
}

async function main(): Promise<void> {
  const runs = Number(arg('runs') ?? '20');
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got "${arg('runs')}"`);
  const given = arg('addr');
  let agent: BenchAgent | undefined;
  const addr = given ?? (agent = await startBenchAgent()).address;
  const watch = new RunningWatch();
  const jobs: string[] = [];
  const up: number[] = [];
  const down: number[] = [];
  try {
    await watch.open(addr);
    for (let i = 0; i < runs + 2; i++) {
      const id = `svc-bench-${process.pid}-${i}`;
      jobs.push(id);
      const parsed = await fetch(`${addr}/v1/jobs/parse`, { method: 'POST', body: JSON.stringify({ JobHCL: hcl(id), Canonicalize: true }) });
      if (!parsed.ok) throw new Error(`parse: ${parsed.status} ${await parsed.text()}`);
      const visible = blockUntil(addr, id, 1);
      const reg = await fetch(`${addr}/v1/jobs`, { method: 'PUT', body: JSON.stringify({ Job: await parsed.json() }) });
      if (!reg.ok) throw new Error(`register ${id}: ${reg.status} ${await reg.text()}`);
      const [runningAt, visibleAt] = await Promise.all([watch.running(id), visible]);
      const gone = blockUntil(addr, id, 0);
      const stopAt = performance.now();
      await fetch(`${addr}/v1/job/${id}`, { method: 'DELETE' });
      const goneAt = await gone;
      // Two warm-up runs (JIT, the first spawns) are not counted.
      if (i >= 2) {
        up.push(visibleAt - runningAt);
        down.push(goneAt - stopAt);
      }
    }
    const fmt = (v: number) => `${v.toFixed(1)} ms`;
    const report = (what: string, xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const median = percentile(s, 50);
      console.log(`${what} over ${s.length} runs: median ${fmt(median)}, p95 ${fmt(percentile(s, 95))} (goal: median ≤ ${GOAL_MS} ms) ${median <= GOAL_MS ? 'MET' : 'NOT MET'}`);
      return { runs: s.length, medianMs: median, p95Ms: percentile(s, 95), goalMedianMs: GOAL_MS, met: median <= GOAL_MS };
    };
    const registered = report('task running → visible in a blocking GET /v1/service/:name', up);
    // The client writes a registration as soon as its task runs, while its status report is
    // batched: a negative figure is an instance visible before the running event reached us.
    console.log('  (negative: visible before the allocation\'s running event reached the event stream)');
    const deregistered = report('job stop → gone from a blocking GET /v1/service/:name', down);
    const out = join(process.cwd(), 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'service-latency.json'), JSON.stringify({ registered, deregistered, agent: given ? 'external' : 'dev (started by the benchmark)' }, null, 2) + '\n');
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
