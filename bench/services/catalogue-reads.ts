/**
 * Native service catalogue reads at scale (issue 28): 1,000 services × 10 instances registered
 * on a real server (SQLite log, FSM, scheduler) behind the real HTTP layer on loopback, then the
 * median and p95 of `GET /v1/services` and of `GET /v1/service/:name` (a random service each
 * time) — goal: median ≤ 5 ms each — and a check that one registration change wakes only the
 * blocking queries on that service. Prints each figure beside its goal and writes
 * bench/results/service-catalogue.json.
 *
 *   npm run build && node dist/bench/services/catalogue-reads.js [--services 1000] [--instances 10] [--reads 300]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../../src/http/http-server.js';
import { Server } from '../../src/server/server.js';
import { serviceRegistrationId, type ServiceRegistrationInput } from '../../src/structs/service-registration.js';
import type { Allocation } from '../../src/structs/index.js';
import { benchJob, simulatedNode } from '../scheduler/sim-cluster.js';
import { percentile } from '../percentile.js';

const GOAL_MS = 5;
const NODES = 50;

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

async function timeGets(base: string, paths: () => string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(base + paths());
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const services = arg('services', 1000);
  const instances = arg('instances', 10);
  const reads = arg('reads', 300);
  const dir = mkdtempSync(join(tmpdir(), 'caravan-svc-bench-'));
  const server = await Server.open({ dataDir: dir, numWorkers: 1 });
  const app = createHttpServer({ server });
  let beat: NodeJS.Timeout | undefined;
  try {
    const nodes = Array.from({ length: NODES }, (_, i) => simulatedNode(i));
    for (const n of nodes) await server.registerNode(n);
    const secretOf = new Map(nodes.map((n) => [n.ID, n.SecretID]));
    // The simulated nodes heartbeat as clients do: a node marked down would lose its registrations.
    beat = setInterval(() => {
      for (const n of nodes) void server.heartbeatNode(n.ID, 'ready', n.SecretID).catch(() => undefined);
    }, 1000);
    for (let i = 0; i < services; i++) await server.registerJob(benchJob(i, instances, 'service'));
    const want = services * instances;
    const deadline = Date.now() + 600_000;
    let allocs: Allocation[] = [];
    for (;;) {
      allocs = server.state.allocs().filter((a) => a.DesiredStatus === 'run');
      if (allocs.length >= want) break;
      if (Date.now() > deadline) throw new Error(`only ${allocs.length} of ${want} allocations placed`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Each allocation registers its instance of its job's service, through the client write path.
    const byNode = new Map<string, ServiceRegistrationInput[]>();
    for (const a of allocs) {
      const reg: ServiceRegistrationInput = {
        ID: serviceRegistrationId(a.ID, a.TaskGroup, a.JobID, 'http'),
        ServiceName: a.JobID,
        Namespace: a.Namespace,
        NodeID: a.NodeID,
        Datacenter: 'dc1',
        JobID: a.JobID,
        AllocID: a.ID,
        Tags: ['v1', 'http'],
        Address: '10.0.0.1',
        Port: 20_000 + (byNode.get(a.NodeID)?.length ?? 0),
      };
      byNode.set(a.NodeID, [...(byNode.get(a.NodeID) ?? []), reg]);
    }
    for (const [nodeId, regs] of byNode) {
      for (let i = 0; i < regs.length; i += 1000) await server.serviceRegistrations!.upsertFromClient({ Services: regs.slice(i, i + 1000) }, secretOf.get(nodeId)!);
    }
    const registered = server.state.serviceRegistrationsByName('default', 'bench-0').length;
    if (registered !== instances) throw new Error(`bench-0 has ${registered} instances, not ${instances}`);

    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await timeGets(base, () => '/v1/services', 20); // warm-up
    const list = await timeGets(base, () => '/v1/services', reads);
    const one = await timeGets(base, () => `/v1/service/bench-${Math.floor(Math.random() * services)}`, reads);

    // One change wakes only the queries on its service: 20 blocking queries, one on the changed one.
    // Each query blocks from its own service's current index, as a client that read it first does.
    let woken = 0;
    let changedAt = Infinity;
    const blocked = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const first = await fetch(`${base}/v1/service/bench-${i}`);
        await first.arrayBuffer();
        return { i, index: Number(first.headers.get('x-nomad-index')) };
      }),
    ).then((qs) =>
      qs.map(({ i, index }) =>
        fetch(`${base}/v1/service/bench-${i}?index=${index}&wait=3s`).then(async (r) => {
          await r.arrayBuffer();
          // Answered after the change and well before the wait ran out: woken by it.
          if (performance.now() >= changedAt && performance.now() - changedAt < 2000) {
            woken++;
            if (process.env.DEBUG_WAKE) console.log(`woken: bench-${i} asked index ${index}, answered ${r.headers.get('x-nomad-index')}`);
          }
        }),
      ),
    );
    await new Promise((r) => setTimeout(r, 300));
    changedAt = performance.now();
    const target = byNode.get(server.state.serviceRegistrationsByName('default', 'bench-0')[0]!.NodeID)!.find((r) => r.ServiceName === 'bench-0')!;
    await server.serviceRegistrations!.upsertFromClient({ Services: [{ ...target, Tags: ['v2'] }] }, secretOf.get(target.NodeID)!);
    await Promise.all(blocked);

    const result = {
      services,
      instances,
      reads,
      list: { medianMs: percentile(list, 50), p95Ms: percentile(list, 95) },
      service: { medianMs: percentile(one, 50), p95Ms: percentile(one, 95) },
      blockingWokenByOneChange: woken,
      goalMedianMs: GOAL_MS,
    };
    const fmt = (x: number) => x.toFixed(2);
    console.log(`services × instances: ${services} × ${instances}`);
    console.log(`GET /v1/services        median ${fmt(result.list.medianMs)} ms, p95 ${fmt(result.list.p95Ms)} ms  (goal: median ≤ ${GOAL_MS} ms) ${result.list.medianMs <= GOAL_MS ? 'MET' : 'NOT MET'}`);
    console.log(`GET /v1/service/:name   median ${fmt(result.service.medianMs)} ms, p95 ${fmt(result.service.p95Ms)} ms  (goal: median ≤ ${GOAL_MS} ms) ${result.service.medianMs <= GOAL_MS ? 'MET' : 'NOT MET'}`);
    console.log(`blocking queries woken by one change to bench-0: ${woken} of 20 (goal: 1) ${woken === 1 ? 'MET' : 'NOT MET'}`);
    const out = join(process.cwd(), 'bench', 'results');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'service-catalogue.json'), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    clearInterval(beat);
    await app.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
