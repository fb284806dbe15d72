/**
 * Soak benchmark (issue 17; not part of npm test): against one agent, at a steady rate and for a
 * fixed time, registrations, updates and stops (purges) of raw_exec jobs, exec sessions, blocking
 * readers (the job list and one job) and event-stream readers — some reading, some that never
 * read — with a forced garbage collection four times an interval, so the workload is steady. Every
 * minute (or --every) it prints request p50/p99 (registrations, updates, stops, exec sessions;
 * blocking and streaming reads are counted, not timed) and errors of that interval and the agent's
 * resident memory; at the end, the growth after warm-up beside the goal: flat memory (≤ 10 %
 * growth after warm-up) and no error.
 *
 * Warm-up (--warmup, default 3 min, at least one interval) is the time the agent's bounded
 * buffers take to fill: the event broker keeps the last 4096 event batches, which this workload
 * (~15 batches/s) fills in about 4.5 min, and the heap grows with it to a steady size. Growth is
 * measured from the memory at the end of warm-up to the peak after it.
 *
 * Usage: node dist/bench/soak/soak.js [--duration 10m] [--every 1m] [--warmup 3m] [ADDR]
 *   Without ADDR it starts its own `caravan agent -dev` (and can then read its memory); durations
 *   are Go-style ("90s", "3m") or seconds. Writes bench/results/soak.json.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { runExecSession } from '../../src/cli/commands/alloc-exec-session.js';
import { parseDuration } from '../../src/structs/duration.js';
import { startBenchAgent, type BenchAgent } from '../dev-agent.js';
import { percentile } from '../percentile.js';

/** Allowed memory growth after warm-up. */
const GOAL_GROWTH = 0.1;
/** Jobs alive at once: registrations beyond it stop the oldest. */
const LIVE_JOBS = 15;

interface Args {
  addr: string | undefined;
  durationMs: number;
  everyMs: number;
  warmupMs: number;
}

function ms(text: string): number {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  return parseDuration(text) / 1e6;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { addr: undefined, durationMs: 10 * 60_000, everyMs: 60_000, warmupMs: 3 * 60_000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--duration' || a === '-duration') out.durationMs = ms(argv[++i] ?? '');
    else if (a === '--every' || a === '-every') out.everyMs = ms(argv[++i] ?? '');
    else if (a === '--warmup' || a === '-warmup') out.warmupMs = ms(argv[++i] ?? '');
    else out.addr = /^https?:\/\//.test(a) ? a : `http://${a}`;
  }
  if (!(out.durationMs > 0)) throw new Error('--duration must be a positive duration (e.g. 3m)');
  if (!(out.everyMs > 0)) throw new Error('--every must be a positive duration (e.g. 30s)');
  if (!(out.warmupMs >= 0)) throw new Error('--warmup must be a duration (e.g. 3m)');
  return out;
}


/** The agent's resident set in MB, or undefined when it is not a local process we started. */
function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** Latencies and errors of the current interval. */
class Stats {
  latencies: number[] = [];
  errors: string[] = [];
  count = 0;
  take(): { latencies: number[]; errors: string[]; count: number } {
    const out = { latencies: this.latencies.sort((a, b) => a - b), errors: this.errors, count: this.count };
    this.latencies = [];
    this.errors = [];
    this.count = 0;
    return out;
  }
}

function jobBody(id: string, version: number): string {
  return JSON.stringify({
    Job: {
      ID: id, Name: id, Type: 'service', Datacenters: ['dc1'], Meta: { version: String(version), pad: 'x'.repeat(2048) },
      TaskGroups: [{
        Name: 'g', Count: 1,
        Update: { MaxParallel: 0 },
        Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['3600'] }, Resources: { CPU: 10, MemoryMB: 16 } }],
      }],
    },
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  let agent: BenchAgent | undefined;
  const addr = args.addr ?? (agent = await startBenchAgent()).address;
  const pid = agent?.proc.pid;
  const stats = new Stats();
  const endAt = performance.now() + args.durationMs;
  const running = () => performance.now() < endAt;
  const sockets: Socket[] = [];

  /** One timed request; non-2xx answers and network errors count as errors. */
  const req = async (what: string, path: string, init?: RequestInit & { timeoutMs?: number; blocking?: boolean }): Promise<Response | undefined> => {
    const t0 = performance.now();
    try {
      const res = await fetch(addr + path, { ...init, signal: AbortSignal.timeout(init?.timeoutMs ?? 30_000) });
      const body = await res.arrayBuffer();
      // A blocking query's time is its wait: counted, not timed.
      if (!init?.blocking) stats.latencies.push(performance.now() - t0);
      stats.count++;
      if (!res.ok) stats.errors.push(`${what}: ${res.status} ${Buffer.from(body).toString().slice(0, 200)}`);
      return new Response(body, { status: res.status, headers: res.headers });
    } catch (err) {
      stats.count++;
      stats.errors.push(`${what}: ${(err as Error).message}`);
      return undefined;
    }
  };
  const every = async (periodMs: number, fn: () => Promise<void>): Promise<void> => {
    while (running()) {
      const t0 = performance.now();
      await fn();
      const left = periodMs - (performance.now() - t0);
      if (left > 0 && running()) await new Promise((r) => setTimeout(r, Math.min(left, endAt - performance.now())));
    }
  };

  // A runner job for the exec sessions (as Poseidon's).
  await req('register runner', '/v1/jobs', { method: 'PUT', body: jobBody('soak-runner', 0) });
  let runnerAlloc = '';
  for (let i = 0; i < 200 && !runnerAlloc; i++) {
    const r = await req('runner allocs', '/v1/job/soak-runner/allocations');
    const allocs = r ? ((await r.json()) as { ID: string; ClientStatus: string }[]) : [];
    runnerAlloc = allocs.find((a) => a.ClientStatus === 'running')?.ID ?? '';
    if (!runnerAlloc) await new Promise((r2) => setTimeout(r2, 100));
  }
  if (!runnerAlloc) {
    await agent?.stop();
    throw new Error(`the exec runner job did not start: ${stats.errors.slice(0, 3).join('; ')}`);
  }

  const live: string[] = [];
  let seq = 0;
  const loops: Promise<void>[] = [
    // Registrations of new jobs, and stops (purge) of the oldest beyond LIVE_JOBS: 2/s each way.
    every(500, async () => {
      const id = `soak-${seq++}`;
      await req('register', '/v1/jobs', { method: 'PUT', body: jobBody(id, 0) });
      live.push(id);
      if (live.length > LIVE_JOBS) await req('stop', `/v1/job/${live.shift()!}?purge=true`, { method: 'DELETE' });
    }),
    // Garbage collection, as an operator's `nomad system gc`: the terminal evaluations and
    // allocations of the purged jobs go, and the client's runners of them with them. Without it
    // they stay for the server's eval GC threshold (1 h, Nomad's default), so the state would
    // grow through any run shorter than that, by design, and hide a leak in that growth.
    every(args.everyMs / 4, async () => {
      await req('system gc', '/v1/system/gc', { method: 'PUT' });
    }),
    // Updates of a live job (a new version, rolled out): 2/s.
    every(500, async () => {
      const id = live[Math.floor(Math.random() * live.length)];
      if (id) await req('update', `/v1/job/${id}`, { method: 'PUT', body: jobBody(id, seq) });
    }),
    // Exec sessions into the runner: 4/s.
    every(250, async () => {
      const t0 = performance.now();
      try {
        const code = await runExecSession({ address: addr, allocId: runnerAlloc, task: 't', command: ['echo', 'hi'], tty: false });
        stats.latencies.push(performance.now() - t0);
        stats.count++;
        if (code !== 0) stats.errors.push(`exec: exit ${code}`);
      } catch (err) {
        stats.count++;
        stats.errors.push(`exec: ${(err as Error).message}`);
      }
    }),
    // Blocking readers: the job list and one job, each following its index (5 s waits).
    ...[0, 1, 2].map(async () => {
      let index = 1;
      await every(0, async () => {
        const r = await req('blocking jobs', `/v1/jobs?index=${index}&wait=5s`, { timeoutMs: 20_000, blocking: true });
        index = Number(r?.headers.get('x-nomad-index') ?? index);
      });
    }),
    (async () => {
      let index = 1;
      await every(0, async () => {
        const r = await req('blocking job', `/v1/job/soak-runner?index=${index}&wait=5s`, { timeoutMs: 20_000, blocking: true });
        index = Number(r?.headers.get('x-nomad-index') ?? index);
      });
    })(),
    // Event-stream readers that read everything, re-opened when the stream ends.
    ...[0, 1, 2].map(() =>
      every(0, async () => {
        const ac = new AbortController();
        const stop = setTimeout(() => ac.abort(), Math.max(0, endAt - performance.now()));
        try {
          const res = await fetch(`${addr}/v1/event/stream?topic=*`, { signal: ac.signal });
          if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
          const reader = res.body.getReader();
          while (!(await reader.read()).done) {
            // read and drop
          }
        } catch (err) {
          if (!ac.signal.aborted) stats.errors.push(`event stream: ${(err as Error).message}`);
        } finally {
          clearTimeout(stop);
        }
      }),
    ),
  ];
  // Event-stream readers that never read, renewed every interval (the agent cuts them off).
  const host = new URL(addr);
  const stalled = () => {
    for (let i = 0; i < 3; i++) {
      const s = connect(Number(host.port), host.hostname);
      s.on('error', () => {});
      s.write(`GET /v1/event/stream?topic=* HTTP/1.1\r\nHost: ${host.host}\r\n\r\n`);
      s.pause();
      sockets.push(s);
    }
  };
  stalled();

  const rows: { minute: number; requests: number; p50Ms: number; p99Ms: number; errors: number; rssMb: number | null }[] = [];
  const errorSamples: string[] = [];
  const report = (): void => {
    const s = stats.take();
    const rss = rssMb(pid);
    const row = { minute: rows.length + 1, requests: s.count, p50Ms: percentile(s.latencies, 50), p99Ms: percentile(s.latencies, 99), errors: s.errors.length, rssMb: rss ?? null };
    rows.push(row);
    errorSamples.push(...s.errors.slice(0, 3));
    const label = args.everyMs === 60_000 ? `minute ${row.minute}` : `interval ${row.minute} (${(args.everyMs / 1000).toFixed(0)} s)`;
    console.log(`${label}: ${row.requests} requests, p50 ${row.p50Ms.toFixed(1)} ms, p99 ${row.p99Ms.toFixed(1)} ms, ${row.errors} errors, agent RSS ${rss === undefined ? 'n/a' : `${rss.toFixed(1)} MB`}`);
    for (const e of s.errors.slice(0, 3)) console.log(`  error: ${e}`);
    for (const sk of sockets.splice(0)) sk.destroy();
    if (running()) stalled();
  };
  const ticker = setInterval(report, args.everyMs);
  try {
    await Promise.all(loops);
  } finally {
    clearInterval(ticker);
    for (const sk of sockets.splice(0)) sk.destroy();
  }
  // The tail (blocking readers finishing their last wait): its errors count in the last row.
  const tail = stats.take();
  if (rows.length > 0) rows[rows.length - 1]!.errors += tail.errors.length;
  else if (tail.count > 0) rows.push({ minute: 1, requests: tail.count, p50Ms: percentile(tail.latencies, 50), p99Ms: percentile(tail.latencies, 99), errors: tail.errors.length, rssMb: rssMb(pid) ?? null });
  for (const e of tail.errors.slice(0, 3)) console.log(`  error: ${e}`);
  for (const id of [...live, 'soak-runner']) await fetch(`${addr}/v1/job/${id}?purge=true`, { method: 'DELETE' }).catch(() => undefined);
  await agent?.stop();

  // The memory at the end of warm-up (at least the first interval), and the peak after it.
  const warmRows = Math.max(1, Math.floor(args.warmupMs / args.everyMs));
  const mem = rows.map((r) => r.rssMb).filter((m): m is number => m !== null);
  const warm = mem.length > warmRows ? mem[warmRows - 1] : undefined;
  const peak = mem.length > warmRows ? Math.max(...mem.slice(warmRows)) : undefined;
  const growth = warm !== undefined && peak !== undefined ? (peak - warm) / warm : undefined;
  const errors = rows.reduce((n, r) => n + r.errors, 0);
  const total = rows.reduce((n, r) => n + r.requests, 0);
  const growthText = growth === undefined
    ? `not measured (needs our own agent and an interval after the ${warmRows}-interval warm-up)`
    : `${warm!.toFixed(1)} (end of the ${warmRows}-interval warm-up) → peak ${peak!.toFixed(1)} MB, ${(growth * 100).toFixed(1)} %`;
  const met = growth !== undefined && growth <= GOAL_GROWTH && errors === 0;
  console.log(`soak ${(args.durationMs / 60_000).toFixed(1)} min, ${total} requests: memory after warm-up ${growthText}; ${errors} errors — goal: growth ≤ ${GOAL_GROWTH * 100} % and no error ${met ? '(met)' : '(NOT met)'}`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/soak.json', JSON.stringify({ durationMs: args.durationMs, everyMs: args.everyMs, warmupMs: warmRows * args.everyMs, rows, growth: growth ?? null, goalGrowth: GOAL_GROWTH, errors, errorSamples: errorSamples.slice(0, 20), met }, null, 2) + '\n');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
