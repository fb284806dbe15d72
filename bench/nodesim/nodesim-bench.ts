/**
 * The node simulator's scenarios (issue 30), each printed beside its goal:
 *   1. N nodes register and become ready (≤ 60 s at 10,000);
 *   2. a `system` job (node_pool "all") on every node, all running (≤ 30 s from submit);
 *   3. a service job of 5 allocations a node (50,000 at 10,000 nodes) placed and running
 *      (≤ 30 s), then rolled to a new version with max_parallel = 500, measuring the most
 *      allocations down (not running) at once (≤ 500);
 *   4. steady state for `--steady-seconds` (default 600): a job (10 allocations of a 30 s mock
 *      task, so allocations keep ending and being replaced: a stream of alloc updates) submitted
 *      every second; p99 of the registrations (≤ 50 ms), the server's CPU (≤ 30 % of a core) and
 *      RSS (≤ 1.5 GB), nodes marked down (0);
 *   5. kill -9 of the leader of three servers on etcd during a steady state (scenario-failover.ts):
 *      a new leader serving writes ≤ 3 s after the kill, 0 nodes marked down, 0 allocations lost
 *      or restarted. With 5, the bench starts etcd and three servers on it (not SQLite).
 * Also the simulator's RSS (≤ 4 GB at 10,000) and the server's CPU and RSS. Each scenario, and
 * the run, prints the nodes marked down (a missed heartbeat) and the allocations lost with them
 * while it ran, counted as they happen (down-counter.ts), not read from the end state. Starts
 * one SQLite server on loopback unless `--servers` is given. Writes bench/results/nodesim.json.
 *
 *   npm run build && node dist/bench/nodesim/nodesim-bench.js [--nodes 10000] [--servers 127.0.0.1:4646,…]
 *       [--scenarios 1,2,3,4] [--allocs-per-node 5] [--max-parallel 500] [--steady-seconds 600] [--server-heap-mb 4096]
 *       [--server-pid PID (with --servers: the server whose CPU and RSS to report)]
 *       [--failover-before 20] [--failover-after 45] [--failover-heartbeat-ttl 30] (scenario 5, seconds)
 *       [--sim-threads 2] (worker threads the simulated nodes are split over: simulator-threads.ts)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { api } from '../../test/integration/helpers/agent-process.js';
import { SimulatorThreads } from './simulator-threads.js';
import type { RequestCounts } from './pooled-fetch.js';
import { cpuSeconds, givenServers, rssMB, startSqliteServer, type NodesimServers } from './nodesim-servers.js';
import { SIM_DATACENTERS } from './simulated-node.js';
import { runFailoverScenario, startEtcdServers } from './scenario-failover.js';
import { runRegistrationProber } from './registration-prober.js';
import { percentile } from '../percentile.js';
import { BenchTeardown } from './bench-teardown.js';
import { DownCounter, type DownWindow } from './down-counter.js';

interface Args {
  nodes: number;
  servers: string[];
  scenarios: Set<number>;
  allocsPerNode: number;
  maxParallel: number;
  serverHeapMB: number;
  steadySeconds: number;
  /** With --servers: the pid of the server to measure (CPU, RSS), when it runs on this machine. */
  serverPid: number | undefined;
  /** Scenario 5: steady traffic before and after the kill, and the servers' failover_heartbeat_ttl (s). */
  failoverBefore: number;
  failoverAfter: number;
  failoverHeartbeatTtl: number;
  /** Worker threads the simulated nodes are split over. */
  simThreads: number;
}

/**
 * The simulator's worker threads by default (docs/nodesim.md, "What the threads did"): two. At
 * 10,000 nodes on this 2-core machine, under similar load, two threads registered every node in
 * 50 s where one had 9,948 ready after 300 s; at 100–1,000 nodes neither was faster.
 */
const DEFAULT_SIM_THREADS = 2;

function parseArgs(argv: string[]): Args {
  const out: Args = { nodes: 10_000, servers: [], scenarios: new Set([1, 2, 3, 4]), allocsPerNode: 5, maxParallel: 500, serverHeapMB: 4096, steadySeconds: 600, serverPid: undefined, failoverBefore: 20, failoverAfter: 45, failoverHeartbeatTtl: 30, simThreads: DEFAULT_SIM_THREADS };
  const int = (flag: string, v: string | undefined): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${flag}: must be a positive integer, got "${v ?? ''}"`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    const v = argv[++i];
    if (flag === '--nodes') out.nodes = int(flag, v);
    else if (flag === '--allocs-per-node') out.allocsPerNode = int(flag, v);
    else if (flag === '--max-parallel') out.maxParallel = int(flag, v);
    else if (flag === '--server-heap-mb') out.serverHeapMB = int(flag, v);
    else if (flag === '--steady-seconds') out.steadySeconds = int(flag, v);
    else if (flag === '--server-pid') out.serverPid = int(flag, v);
    else if (flag === '--failover-before') out.failoverBefore = int(flag, v);
    else if (flag === '--failover-after') out.failoverAfter = int(flag, v);
    else if (flag === '--failover-heartbeat-ttl') out.failoverHeartbeatTtl = int(flag, v);
    else if (flag === '--sim-threads') out.simThreads = int(flag, v);
    else if (flag === '--servers') out.servers = (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    else if (flag === '--scenarios') out.scenarios = new Set((v ?? '').split(',').map((s) => int(flag, s.trim())));
    else throw new Error(`unknown argument "${flag}"`);
  }
  if ([...out.scenarios].some((s) => s > 5)) throw new Error('--scenarios: scenarios are 1 to 5');
  if (out.scenarios.has(5) && out.servers.length > 0) throw new Error('--scenarios 5 starts its own servers on etcd: not with --servers');
  if (out.servers.length > 0 && out.servers.some((s) => !/^[^:]+:\d+$/.test(s))) throw new Error(`--servers: want host:port,…, got "${out.servers.join(',')}"`);
  return out;
}

/** One printed figure. */
interface Figure {
  scenario: string;
  value: string;
  goal: string;
  met: boolean | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** Polls `probe` every `everyMs` until it returns true; throws after `timeoutMs`. */
async function until(what: string | (() => string), probe: () => Promise<boolean>, timeoutMs: number, everyMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${secs(timeoutMs)} waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(everyMs);
  }
}

interface NodeStub {
  Status: string;
}

async function nodeStatuses(addr: string): Promise<Map<string, number>> {
  const r = await api<NodeStub[]>(addr, 'GET', '/v1/nodes');
  if (r.status !== 200) throw new Error(`GET /v1/nodes: ${r.status} ${r.text}`);
  const out = new Map<string, number>();
  for (const n of r.body) out.set(n.Status, (out.get(n.Status) ?? 0) + 1);
  return out;
}

interface Deployment {
  Status?: string;
  JobVersion?: number;
  TaskGroups?: Record<string, { PlacedAllocs: number; HealthyAllocs: number; UnhealthyAllocs: number }>;
}

interface Summary {
  Summary: Record<string, { Running: number; Queued: number; Starting: number; Failed: number; Lost: number }>;
}

async function runningOf(addr: string, jobId: string): Promise<number> {
  const r = await api<Summary>(addr, 'GET', `/v1/job/${jobId}/summary`);
  if (r.status !== 200) throw new Error(`summary of ${jobId}: ${r.status} ${r.text}`);
  return Object.values(r.body.Summary).reduce((n, g) => n + g.Running, 0);
}

function mockTask(runFor: string): unknown {
  return { Name: 't', Driver: 'mock_driver', Config: { run_for: runFor }, Resources: { CPU: 10, MemoryMB: 10 } };
}

function systemJob(): unknown {
  return { Job: { ID: 'nodesim-system', Name: 'nodesim-system', Type: 'system', Datacenters: [...SIM_DATACENTERS], NodePool: 'all', TaskGroups: [{ Name: 'g', Count: 1, Tasks: [mockTask('24h')] }] } };
}

const SECOND_NS = 1_000_000_000;

function serviceJob(count: number, maxParallel: number, runFor: string): unknown {
  return {
    Job: {
      ID: 'nodesim-service',
      Name: 'nodesim-service',
      Type: 'service',
      Datacenters: [...SIM_DATACENTERS],
      NodePool: 'all',
      Update: { MaxParallel: maxParallel, HealthCheck: 'task_states', MinHealthyTime: 0, HealthyDeadline: 300 * SECOND_NS, ProgressDeadline: 600 * SECOND_NS, Stagger: SECOND_NS },
      // The task's config changes between versions: a destructive update, as a new image would be.
      TaskGroups: [{ Name: 'g', Count: count, Tasks: [mockTask(runFor)] }],
    },
  };
}

async function register(addr: string, body: unknown): Promise<void> {
  const r = await api(addr, 'PUT', '/v1/jobs', body);
  if (r.status !== 200) throw new Error(`registering job: ${r.status} ${r.text}`);
}

/**
 * How late the server's event loop ran (p99, max; ms) since the previous scrape of its
 * /v1/metrics (each scrape resets it); null when it does not say.
 */
async function serverLoopDelay(addr: string): Promise<{ p99: number; max: number } | null> {
  const r = await api(addr, 'GET', '/v1/metrics?format=prometheus').catch(() => null);
  const stat = (name: string) => Number(new RegExp(`^caravan_runtime_event_loop_delay_seconds\\{stat="${name}"\\} (\\S+)$`, 'm').exec(r?.text ?? '')?.[1] ?? NaN) * 1000;
  const out = { p99: stat('p99'), max: stat('max') };
  return Number.isNaN(out.p99) || Number.isNaN(out.max) ? null : out;
}

/** Samples a server's CPU between two calls, as a share of one core. */
function cpuMeter(pid: number | undefined): () => number | null {
  if (pid === undefined) return () => null;
  const t0 = Date.now();
  const c0 = cpuSeconds(pid);
  return () => (cpuSeconds(pid) - c0) / ((Date.now() - t0) / 1000);
}

/** Requests per node between two counts, by kind. */
function requestsPerNode(before: RequestCounts, after: RequestCounts, nodes: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(after) as (keyof RequestCounts)[]) out[k] = (after[k] - before[k]) / nodes;
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const figures: Figure[] = [];
  const extra: Record<string, unknown> = { nodes: args.nodes, cores: cpus().length, loadavgAtStart: loadavg() };
  // What the bench starts is stopped on every way out, signals and uncaught errors included.
  const teardown = new BenchTeardown();
  teardown.installExitHandlers();
  const root = mkdtempSync(join(tmpdir(), 'caravan-nodesim-'));
  teardown.add('the simulator\'s data directory', () => rmSync(root, { recursive: true, force: true }));
  let servers: NodesimServers | null = null;
  let sim: SimulatorThreads | null = null;
  const print = (f: Figure) => {
    figures.push(f);
    const mark = f.met === null ? ' ' : f.met ? '✓' : '✗';
    console.log(`${mark} ${f.scenario.padEnd(52)} ${f.value.padEnd(28)} goal ${f.goal}`);
  };
  // Nodes marked down and allocations lost during a window (a scenario, the run), beside their
  // goal; `label` is the scenario's number or "run:".
  const printDowns = async (label: string, w: DownWindow, endState = ''): Promise<Record<string, number>> => {
    const f = await w.close();
    const gap = f.resumed > 0 ? `; the stream resumed ${f.resumed}×` : '';
    print({ scenario: `${label} nodes marked down (a missed heartbeat)`, value: `${f.nodesMarkedDown} (${f.nodes} nodes${endState}${gap})`, goal: '0', met: f.nodesMarkedDown === 0 });
    print({ scenario: `${label} allocations lost (their node marked down)`, value: String(f.allocsLost), goal: '0', met: f.allocsLost === 0 });
    return { ...f };
  };
  // How late the main thread's timers run (the scenarios' polls); each simulator thread measures
  // its own: a starved simulator heartbeats late, and the nodes it fails to keep alive are its
  // fault, not the servers'.
  const loopDelay = monitorEventLoopDelay({ resolution: 20 });
  loopDelay.enable();
  // The simulator's peak RSS over the run, not only at its end.
  let simPeakMB = 0;
  const rssSampler = setInterval(() => { simPeakMB = Math.max(simPeakMB, process.memoryUsage().rss / (1024 * 1024)); }, 1000);
  rssSampler.unref();
  try {
    servers =
      args.servers.length > 0
        ? givenServers(args.servers)
        : args.scenarios.has(5)
          ? await startEtcdServers({ heapMB: args.serverHeapMB, failoverHeartbeatTtlSeconds: args.failoverHeartbeatTtl })
          : await startSqliteServer(args.serverHeapMB);
    const started = servers;
    teardown.add('the servers', () => started.stop());
    // Follows the Node topic of the event stream from here on (any live server).
    const downs = await DownCounter.start(() => started.addresses);
    teardown.add('the down counter', () => downs.stop());
    const runWindow = await downs.open();
    extra.down = {};
    const downFigures = extra.down as Record<string, unknown>;
    // After scenario 5 these are the new leader's.
    let addr = `http://${servers.addresses[0]!}`;
    let serverPid = servers.processes[0]?.proc.pid ?? args.serverPid;
    console.log(`nodesim: ${args.nodes} nodes on ${Math.min(args.simThreads, args.nodes)} thread(s) against ${servers.addresses.join(', ')} (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);

    // 1. Registration: from the first client started to every node ready on the server.
    const w1 = await downs.open();
    const t1 = Date.now();
    const cpu1 = cpuMeter(serverPid);
    // The clients' warnings are counted in their threads (a failed heartbeat is one), not printed.
    sim = await SimulatorThreads.start({ servers: servers.addresses, nodes: args.nodes, threads: args.simThreads, dataDir: root });
    const simulator = sim;
    teardown.add('the simulator', () => simulator.stop());
    const startedMs = Date.now() - t1;
    let ready = 0;
    // On a timeout the error says how far it got.
    await until(() => `${args.nodes} nodes ready (${ready} were)`, async () => {
      ready = (await nodeStatuses(addr)).get('ready') ?? 0;
      return ready >= args.nodes;
    }, 300_000, 1000);
    const registerMs = Date.now() - t1;
    print({ scenario: `1. ${args.nodes} nodes registered and ready`, value: `${secs(registerMs)} (clients started in ${secs(startedMs)})`, goal: '≤ 60 s', met: registerMs <= 60_000 });
    extra.registration = { ms: registerMs, clientsStartedMs: startedMs, serverCpuCores: cpu1(), pool: (await sim.stats()).pool, threads: sim.size };
    downFigures.registration = await printDowns('1.', w1);

    if (args.scenarios.has(2)) {
      const w2 = await downs.open();
      const t2 = Date.now();
      const cpu2 = cpuMeter(serverPid);
      const sent2 = (await sim.stats()).pool.requests;
      // The simulator's own CPU over the scenario (every thread's: getrusage of the process): on
      // a shared machine its wall time says how much of a core it got, this says what the nodes cost.
      const simCpu2 = process.cpuUsage();
      await register(addr, systemJob());
      let running = 0;
      await until(() => `the system job running on every node (${running} were)`, async () => (running = await runningOf(addr, 'nodesim-system')) >= args.nodes, 300_000, 250);
      const ms = Date.now() - t2;
      print({ scenario: `2. system job on ${args.nodes} nodes, all running`, value: secs(ms), goal: '≤ 30 s from submit', met: ms <= 30_000 });
      const simCpuMs = (() => { const u = process.cpuUsage(simCpu2); return (u.user + u.system) / 1000; })();
      print({ scenario: '   simulator CPU meanwhile', value: `${secs(simCpuMs)} (${(simCpuMs / args.nodes).toFixed(2)} ms a node)`, goal: '', met: null });
      // What each node asked of the servers meanwhile: the simulator's CPU goes mostly to these.
      const perNode = requestsPerNode(sent2, (await sim.stats()).pool.requests, args.nodes);
      print({ scenario: '   requests a node sent meanwhile', value: Object.entries(perNode).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', '), goal: '', met: null });
      extra.systemJob = { ms, serverCpuCores: cpu2(), simulatorCpuMs: simCpuMs, requestsPerNode: perNode };
      downFigures.systemJob = await printDowns('2.', w2);
    }

    if (args.scenarios.has(3)) {
      const count = args.nodes * args.allocsPerNode;
      // Nomad's default binpack piles these small allocations a few hundred to a node (the
      // biggest nodes first); the scenario is "5 a node", so the cluster spreads, as an operator
      // running many small services would set it.
      const sc = await api(addr, 'PUT', '/v1/operator/scheduler/configuration', { SchedulerAlgorithm: 'spread' });
      if (sc.status !== 200) throw new Error(`setting the spread scheduler: ${sc.status} ${sc.text}`);
      const w3 = await downs.open();
      const t3 = Date.now();
      const cpu3 = cpuMeter(serverPid);
      await register(addr, serviceJob(count, args.maxParallel, '24h'));
      await until(`${count} service allocations running`, async () => (await runningOf(addr, 'nodesim-service')) >= count, 600_000, 250);
      const placeMs = Date.now() - t3;
      print({ scenario: `3. service job of ${count} allocations running`, value: secs(placeMs), goal: '≤ 30 s', met: placeMs <= 30_000 });
      extra.serviceJob = { count, ms: placeMs, serverCpuCores: cpu3() };
      await waitDeployment(addr, 'successful', 600_000);

      const t4 = Date.now();
      await register(addr, serviceJob(count, args.maxParallel, '25h'));
      // Down: allocations not running (an old one stopped before its replacement runs). In
      // flight: the deployment's placed but not yet healthy allocations, what max_parallel bounds.
      let maxDown = 0;
      let maxInFlight = 0;
      let done = false;
      while (!done) {
        const running = await runningOf(addr, 'nodesim-service').catch(() => count);
        maxDown = Math.max(maxDown, count - running);
        const d = await api<Deployment | null>(addr, 'GET', '/v1/job/nodesim-service/deployment');
        if (d.body?.JobVersion === 1) {
          for (const g of Object.values(d.body.TaskGroups ?? {})) maxInFlight = Math.max(maxInFlight, g.PlacedAllocs - g.HealthyAllocs - g.UnhealthyAllocs);
        }
        if (d.body?.JobVersion === 1 && d.body.Status !== 'running') {
          if (d.body.Status !== 'successful') throw new Error(`the rolling update ended ${d.body.Status}`);
          done = true;
        } else if (Date.now() - t4 > 1_800_000) {
          throw new Error('the rolling update did not finish in 30 min');
        } else {
          await sleep(200);
        }
      }
      const rollMs = Date.now() - t4;
      print({
        scenario: `3. rolling update, max_parallel = ${args.maxParallel}`,
        value: `${maxDown} down, ${maxInFlight} in flight at most; ${secs(rollMs)}`,
        goal: `≤ ${args.maxParallel} down at a time`,
        met: maxDown <= args.maxParallel && maxInFlight <= args.maxParallel,
      });
      extra.rollingUpdate = { ms: rollMs, maxDown, maxInFlight };
      downFigures.serviceJob = await printDowns('3.', w3);
    }

    if (args.scenarios.has(4)) {
      const w4 = await downs.open();
      const cpu4 = cpuMeter(serverPid);
      await serverLoopDelay(addr);
      // Timed on a thread of its own (registration-prober.ts): this thread is the simulator's.
      const probing = runRegistrationProber(addr, args.steadySeconds);
      let peakRss = 0;
      let finished = false;
      void probing.finally(() => (finished = true)).catch(() => undefined);
      while (!finished) {
        if (serverPid !== undefined) peakRss = Math.max(peakRss, rssMB(serverPid));
        await Promise.race([probing, sleep(1000)]);
      }
      const latencies = [...(await probing)];
      const cores = cpu4();
      const lag = await serverLoopDelay(addr);
      latencies.sort((a, b) => a - b);
      const p99 = percentile(latencies, 99);
      print({ scenario: `4. steady state, ${latencies.length} jobs at 1/s: registration p99`, value: `${p99.toFixed(0)} ms (p50 ${percentile(latencies, 50).toFixed(0)} ms)`, goal: '≤ 50 ms', met: p99 <= 50 });
      const over = latencies.filter((l) => l > 50).length;
      print({ scenario: '4. steady state: registrations over 50 ms', value: `${over} of ${latencies.length}, max ${latencies.at(-1)?.toFixed(0) ?? '-'} ms`, goal: '—', met: null });
      if (lag) print({ scenario: "4. steady state: server's event loop late by", value: `p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms`, goal: '(a registration waits it out)', met: null });
      if (cores !== null) print({ scenario: '4. steady state: server CPU', value: `${(cores * 100).toFixed(0)} % of a core`, goal: '≤ 30 %', met: cores <= 0.3 });
      if (serverPid !== undefined) print({ scenario: '4. steady state: server peak RSS', value: `${peakRss.toFixed(0)} MB`, goal: '≤ 1.5 GB', met: peakRss <= 1536 });
      downFigures.steady = await printDowns('4.', w4);
      extra.steady = { seconds: args.steadySeconds, jobs: latencies.length, p50: percentile(latencies, 50), p99, over50ms: over, serverCpuCores: cores, peakRssMB: peakRss, serverLoopDelayMs: lag };
    }

    if (args.scenarios.has(5)) {
      const r = await runFailoverScenario({
        servers,
        nodes: args.nodes,
        beforeSeconds: args.failoverBefore,
        afterSeconds: args.failoverAfter,
        print,
        clientWarnings: () => simulator.warnings(),
        downs,
      });
      addr = r.address;
      serverPid = r.pid;
      extra.failover = r.extra;
    }

    // The run's: the windows above and what fell between them. A node still down at the end is
    // said beside it (one that never came back, apart from those that did).
    const downAtEnd = (await nodeStatuses(addr)).get('down') ?? 0;
    downFigures.run = { ...(await printDowns('run:', runWindow, `, ${downAtEnd} down at the end`)), downAtEnd };
    // Live heap after a full collection when run with --expose-gc: what the nodes hold, apart
    // from the garbage V8 has not collected yet (RSS follows V8's heap limit, see nodesim.md).
    // Every thread's heap and the main thread's (each isolate has its own).
    (globalThis as { gc?: () => void }).gc?.();
    const threadStats = await sim.stats({ gc: true });
    const mem = process.memoryUsage();
    const simMB = Math.max(simPeakMB, mem.rss / (1024 * 1024));
    const heapMB = mem.heapUsed / (1024 * 1024) + threadStats.heapUsedMB;
    print({ scenario: `simulator peak RSS with ${args.nodes} nodes`, value: `${simMB.toFixed(0)} MB (${((simMB * 1024) / args.nodes).toFixed(0)} KB a node)`, goal: '≤ 4 GB at 10,000', met: simMB * (10_000 / args.nodes) <= 4096 });
    print({ scenario: `simulator heap in use at the end${(globalThis as { gc?: unknown }).gc ? ' (after a full GC)' : ''}`, value: `${heapMB.toFixed(0)} MB (${((heapMB * 1024) / args.nodes).toFixed(0)} KB a node; threads ${threadStats.threads.map((t) => t.heapUsedMB.toFixed(0)).join(' + ')})`, goal: '', met: null });
    extra.simHeapUsedMB = heapMB;
    extra.simThreads = threadStats.threads.map((t) => ({ nodes: t.nodes, heapUsedMB: t.heapUsedMB, loopDelayMs: t.loopDelayMs, requests: t.pool.requests }));
    if (serverPid !== undefined) {
      const mb = rssMB(serverPid);
      print({ scenario: 'server RSS', value: `${mb.toFixed(0)} MB`, goal: '≤ 1.5 GB (steady state)', met: null });
      extra.serverRssMB = mb;
    }
    extra.simRssMB = simMB;
    // What the clients logged at warn or above (a failed heartbeat, watch or alloc update), by message.
    const warned = sim.warnings();
    print({ scenario: "clients' warnings over the run", value: Object.entries(warned).map(([m, n]) => `${n}× ${m}`).join('; ') || 'none', goal: '', met: null });
    extra.clientWarnings = warned;
    const lagP99 = threadStats.loopDelayMs.p99;
    const lagMax = threadStats.loopDelayMs.max;
    print({ scenario: 'simulator event-loop delay (its timers run late by)', value: `p99 ${lagP99.toFixed(0)} ms, max ${lagMax.toFixed(0)} ms (worst thread; main thread p99 ${(loopDelay.percentile(99) / 1e6).toFixed(0)} ms)`, goal: 'well under the heartbeat grace (10 s)', met: lagMax < 10_000 });
    extra.simLoopDelayMs = { p99: lagP99, max: lagMax, mainP99: loopDelay.percentile(99) / 1e6, mainMax: loopDelay.max / 1e6 };
    extra.loadavgAtEnd = loadavg();
    console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    await teardown.run();
  }
  const out = join(dirname(fileURLToPath(import.meta.url)), '../../../bench/results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'nodesim.json'), JSON.stringify({ figures, ...extra }, null, 2) + '\n');
}

async function waitDeployment(addr: string, status: string, timeoutMs: number): Promise<void> {
  await until(`the deployment ${status}`, async () => {
    const d = await api<{ Status?: string } | null>(addr, 'GET', '/v1/job/nodesim-service/deployment');
    return d.body?.Status === status;
  }, timeoutMs, 500);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
