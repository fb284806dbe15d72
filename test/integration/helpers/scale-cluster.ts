/**
 * A large cluster for the UI's scale test and benchmark, seeded cheaply: a real Server in this
 * process (SQLite log, FSM, state store, schedulers) behind the real HTTP layer, listening on
 * loopback so a browser can load the UI from it. Nodes are registered through the server's own
 * registerNode (as a client's registration would apply them) and never heartbeat, so their TTL
 * is set far beyond the run; one service job is placed by the scheduler onto them. Nothing runs
 * the allocations: they stay pending, which is all the UI's lists and sums need.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../../src/http/http-server.js';
import { Server } from '../../../src/server/server.js';
import { Table } from '../../../src/server/state/state-reader.js';
import { benchJob, simulatedNode } from '../../../bench/scheduler/sim-cluster.js';

/** Datacenters the nodes are spread over (the topology page sums each). */
export const SCALE_DATACENTERS = ['dc1', 'dc2', 'dc3'];

export interface ScaleCluster {
  address: string;
  server: Server;
  /** The big job's ID. */
  jobId: string;
  /** Seconds spent registering nodes and placing the job. */
  seedSeconds: { nodes: number; placement: number };
  close(): Promise<void>;
}

/** Starts the server and seeds `nodes` nodes and one service job of `allocs` allocations placed on them. */
export async function startScaleCluster({ nodes, allocs, jobId = 'big' }: { nodes: number; allocs: number; jobId?: string }): Promise<ScaleCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-ui-scale-'));
  // Nodes that never heartbeat keep a TTL far beyond the run; GC off so nothing is collected mid-test.
  const server = await Server.open({ dataDir: dir, numWorkers: 2, heartbeat: { minTtlMs: 24 * 3_600_000 }, gcIntervalMs: 0 });
  let app: FastifyInstance | undefined;
  try {
    let t0 = performance.now();
    const all = Array.from({ length: nodes }, (_, i) => ({ ...simulatedNode(i), Datacenter: SCALE_DATACENTERS[i % SCALE_DATACENTERS.length]! }));
    for (let i = 0; i < all.length; i += 500) await Promise.all(all.slice(i, i + 500).map((n) => server.registerNode(n)));
    const nodeSeconds = (performance.now() - t0) / 1000;

    t0 = performance.now();
    const job = { ...benchJob(0, allocs, 'service'), ID: jobId, Name: jobId, Datacenters: SCALE_DATACENTERS };
    await server.registerJob(job);
    let index = 0;
    let placed = 0;
    let lastProgress = performance.now();
    while ((placed = server.state.allocsByJob(job.Namespace, jobId).length) < allocs) {
      index = await server.waitForChange([Table.Allocs], index, 1000);
      if (server.state.allocsByJob(job.Namespace, jobId).length > placed) lastProgress = performance.now();
      else if (performance.now() - lastProgress > 60_000) throw new Error(`placement stalled at ${placed}/${allocs}`);
    }
    const placementSeconds = (performance.now() - t0) / 1000;

    app = createHttpServer({ server });
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    const listening = app;
    return {
      address,
      server,
      jobId,
      seedSeconds: { nodes: nodeSeconds, placement: placementSeconds },
      async close() {
        await listening.close();
        await server.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await app?.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
