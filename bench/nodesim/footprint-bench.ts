/**
 * The simulator's own memory, without servers: N simulated nodes — the real Client with the
 * simulator's seams (node-simulator.ts: mock driver, no state kept, jobs shared) — each handed
 * by a stand-in for the servers one allocation of a system job and K of a service job (scenario
 * 3's shape: 5 a node), all running; then the process's peak RSS and its live heap per node.
 * This is issue 30's "10,000 nodes in one process within 4 GB" measured apart from the control
 * plane, on a machine too busy to run both at 10,000 nodes; the stand-in answers registration
 * and heartbeats at once and holds each node's allocation watch (which carries its host volumes) as a server
 * holds a blocking query. What it leaves out: each node's HTTP sockets (nodesim-bench measures
 * those with real servers).
 *
 *   npm run build && node --expose-gc dist/bench/nodesim/footprint-bench.js [--nodes 10000] [--allocs-per-node 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Client, type ServerConnection } from '../../src/client/client.js';
import type { Allocation } from '../../src/structs/alloc.js';
import type { Job } from '../../src/structs/job.js';
import { mockAlloc, mockJob, mockNode, mockTask, mockTaskGroup } from '../../test/mock/factories.js';
import { SharedJobs } from './shared-jobs.js';
import { simulatedNode } from './simulated-node.js';
import { startSimulatedClient } from './node-simulator.js';

const MB = 1024 * 1024;

function parseArgs(argv: string[]): { nodes: number; allocsPerNode: number } {
  const out = { nodes: 10_000, allocsPerNode: 5 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, v] = [argv[i]!, argv[i + 1]];
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${flag}: must be a non-negative integer, got "${v ?? ''}"`);
    if (flag === '--nodes' && n > 0) out.nodes = n;
    else if (flag === '--allocs-per-node') out.allocsPerNode = n;
    else throw new Error(`unknown or bad argument "${flag}"`);
  }
  return out;
}

function job(id: string, type: Job['Type']): Job {
  const task = mockTask({ Name: 't', Driver: 'mock_driver', Config: { run_for: '24h' }, Env: null, Resources: { CPU: 10, MemoryMB: 10, MemoryMaxMB: 0, DiskMB: 0, Cores: 0, Networks: null, Devices: null } });
  return mockJob({ ID: id, Name: id, Type: type, NodePool: 'all', JobModifyIndex: 10, TaskGroups: [mockTaskGroup({ Name: 'g', Count: 1, Tasks: [task] })] });
}

/**
 * A stand-in for the servers for one node: registers it, answers heartbeats, lists `allocs`
 * once and then holds the watch (as a blocking query with nothing new), and hands out each
 * allocation as a fresh copy, as parsed from an answer.
 */
function standInServer(allocs: Allocation[]): ServerConnection {
  const hold = (signal: AbortSignal): Promise<never> => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  let listed = false;
  return {
    registerNode: async () => ({ heartbeatTtlMs: 30_000 }),
    heartbeat: async () => ({ heartbeatTtlMs: 30_000 }),
    watchAllocs: async (_n, _i, _t, signal) => {
      if (listed) return hold(signal);
      listed = true;
      return { allocs: Object.fromEntries(allocs.map((a) => [a.ID, a.AllocModifyIndex])), index: 100 };
    },
    fetchAllocs: async (_n, ids) => allocs.filter((a) => ids.includes(a.ID)).map((a) => JSON.parse(JSON.stringify(a)) as Allocation),
    fetchHostVolumes: async () => [],
    updateAllocs: async () => {},
    readTaskVariables: (_r, signal) => hold(signal),
    signTaskIdentities: async () => [],
    registerServices: async () => {},
    deregisterServices: async () => {},
    servers: () => ['127.0.0.1:4647'],
    setServers: () => {},
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const gc = (globalThis as { gc?: () => void }).gc;
  const root = mkdtempSync(join(tmpdir(), 'caravan-nodesim-footprint-'));
  console.log(`nodesim footprint: ${args.nodes} nodes × (1 + ${args.allocsPerNode}) allocations (load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
  let peakMB = 0;
  const sampler = setInterval(() => { peakMB = Math.max(peakMB, process.memoryUsage().rss / MB); }, 500);
  gc?.();
  const base = process.memoryUsage();
  const system = job('nodesim-system', 'system');
  const service = job('nodesim-service', 'service');
  const jobs = new SharedJobs();
  const logger = pino({ level: 'silent' });
  const hostVolumesDir = join(root, 'shared-host-volumes');
  const hostVolumePluginDir = join(root, 'shared-host-volume-plugins');
  const clients: Client[] = [];
  const t0 = Date.now();
  try {
    for (let i = 0; i < args.nodes; i += 500) {
      const started: Promise<Client>[] = [];
      for (let j = i; j < Math.min(args.nodes, i + 500); j++) {
        const node = simulatedNode(j);
        const n = mockNode({ ID: node.identity.id, Name: node.name });
        const allocs = [mockAlloc(system, n, { Name: 'nodesim-system.g[0]', DesiredStatus: 'run', ClientStatus: 'pending' })];
        for (let k = 0; k < args.allocsPerNode; k++) allocs.push(mockAlloc(service, n, { Name: `nodesim-service.g[${j * args.allocsPerNode + k}]`, DesiredStatus: 'run', ClientStatus: 'pending' }));
        started.push(
          startSimulatedClient(node, {
            dataDir: join(root, node.name),
            connection: jobs.wrap(standInServer(allocs)),
            hostVolumesDir,
            hostVolumePluginDir,
            logger,
          }),
        );
      }
      clients.push(...(await Promise.all(started)));
    }
    const want = args.nodes * (1 + args.allocsPerNode);
    let running = 0;
    for (;;) {
      running = 0;
      for (const c of clients) for (const ar of c.allocRunners()) if (ar.clientUpdate().ClientStatus === 'running') running++;
      if (running >= want) break;
      if (Date.now() - t0 > 600_000) throw new Error(`only ${running} of ${want} allocations running after 10 min`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const upMs = Date.now() - t0;
    // What the nodes cost while nothing happens: heartbeats, each task's stats poll (1 s, as
    // Nomad's collection_interval), driver fingerprints (10 s).
    const cpu0 = process.cpuUsage();
    const idle0 = Date.now();
    await new Promise((r) => setTimeout(r, 10_000));
    const cpu = process.cpuUsage(cpu0);
    const idleCores = (cpu.user + cpu.system) / 1000 / (Date.now() - idle0);
    gc?.();
    const m = process.memoryUsage();
    peakMB = Math.max(peakMB, m.rss / MB);
    const perNode = (bytes: number) => `${((bytes / args.nodes) / 1024).toFixed(1)} KB a node`;
    console.log(`  ${running} allocations running on ${args.nodes} nodes in ${(upMs / 1000).toFixed(1)} s`);
    console.log(`  peak RSS ${peakMB.toFixed(0)} MB (${perNode(peakMB * MB)}); RSS now ${(m.rss / MB).toFixed(0)} MB; goal ≤ 4096 MB at 10,000 nodes: ${peakMB * (10_000 / args.nodes) <= 4096 ? 'met' : 'NOT met'}`);
    console.log(`  live heap${gc ? ' after a full GC' : ' (no --expose-gc: garbage included)'}: ${((m.heapUsed - base.heapUsed) / MB).toFixed(0)} MB over the empty process (${perNode(m.heapUsed - base.heapUsed)}); heap total ${(m.heapTotal / MB).toFixed(0)} MB; external ${(m.external / MB).toFixed(0)} MB`);
    console.log(`  CPU with every allocation running and nothing changing: ${(idleCores * 100).toFixed(0)} % of a core (${((idleCores * 1e6) / args.nodes).toFixed(0)} µs a node a second)`);
    console.log(`  shared job versions: ${jobs.size()}; load average at the end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  } finally {
    clearInterval(sampler);
    // No client shutdown: mock tasks end with the process, and stopping 10,000 clients' loops
    // one by one takes minutes of a busy machine for nothing measured.
    rmSync(root, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
