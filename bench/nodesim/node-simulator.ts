/**
 * The node simulator: N real Caravan clients (src/client's Client — registration, heartbeats at
 * the servers' TTL, the blocking allocation watch, batched alloc updates, alloc and task
 * runners with their lifecycle) in this one process, each with its own identity and resources
 * (simulated-node.ts) and its own mock driver, against servers given by address.
 *
 * What is made cheap, and why it does not change what one client does:
 * - one HTTP socket pool for every client (pooled-fetch.ts): a held blocking query keeps its
 *   own socket on the node's own agent, other requests share a bounded kept-alive pool;
 * - no client state kept (EphemeralStateStore, the client's store seam) instead of one SQLite
 *   file each: a simulated node is never restarted, so nothing needs to survive;
 * - one job object per job version for all nodes (SharedJobs), not one parsed per node;
 * - allocation directories not built on disk (`allocDirsOnDisk: false`): mock tasks that print
 *   nothing read and write nothing there;
 * - the identity and host fingerprint given (no files, no /proc reads per node);
 * - one silent logger for all.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { Client, type ServerConnection } from '../../src/client/client.js';
import { httpServerConnection } from '../../src/client/server-connection.js';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.js';
import { EphemeralStateStore } from './ephemeral-state-store.js';
import { SharedJobs } from './shared-jobs.js';
import { pooledFetch, type PoolStats, type PooledFetch } from './pooled-fetch.js';
import { simulatedNode, type SimulatedNode } from './simulated-node.js';

/** Options of NodeSimulator.start. */
export interface NodeSimulatorOptions {
  /** Servers, "host:port". */
  servers: string[];
  nodes: number;
  /** Index of the first node (`simulatedNode(i)`): a thread of the simulator runs nodes [firstIndex, firstIndex + nodes). Default 0. */
  firstIndex?: number;
  /** Where each node's (nearly empty) data dir goes. */
  dataDir: string;
  /** Sockets of the shared pool for ordinary requests, per server. */
  maxSockets?: number;
  /** Sockets of the heartbeat pool, per server (default 64). */
  heartbeatSockets?: number;
  /** Clients started per tick of the event loop (their registrations then queue for the pool). */
  startBatch?: number;
  /** One logger for every client (default silent). */
  logger?: Logger;
}

/** N simulated nodes in this process. */
export class NodeSimulator {
  private constructor(
    readonly clients: Client[],
    readonly nodes: SimulatedNode[],
    private readonly pool: PooledFetch,
  ) {}

  /** Starts every client; resolves when all are started (registration goes on in their loops). */
  static async start(opts: NodeSimulatorOptions): Promise<NodeSimulator> {
    const pool = pooledFetch({ maxSockets: opts.maxSockets ?? 256, heartbeatSockets: opts.heartbeatSockets ?? 64 });
    const logger = opts.logger ?? pino({ level: 'silent' });
    const jobs = new SharedJobs();
    const nodes: SimulatedNode[] = [];
    const clients: Client[] = [];
    const batch = opts.startBatch ?? 500;
    // Dynamic host volumes are never made here: every node shares one (empty) volumes and plugins
    // directory instead of two of its own on disk.
    const hostVolumesDir = join(opts.dataDir, 'shared-host-volumes');
    const hostVolumePluginDir = join(opts.dataDir, 'shared-host-volume-plugins');
    const first = opts.firstIndex ?? 0;
    const end = first + opts.nodes;
    for (let i = first; i < end; i += batch) {
      const started = [];
      for (let j = i; j < Math.min(end, i + batch); j++) {
        const node = simulatedNode(j);
        nodes.push(node);
        const dataDir = join(opts.dataDir, node.name);
        mkdirSync(dataDir, { recursive: true });
        started.push(
          startSimulatedClient(node, {
            dataDir,
            connection: jobs.wrap(httpServerConnection(opts.servers, undefined, undefined, pool.forNode())),
            hostVolumesDir,
            hostVolumePluginDir,
            logger,
          }),
        );
      }
      clients.push(...(await Promise.all(started)));
    }
    return new NodeSimulator(clients, nodes, pool);
  }

  /** The shared pool's sockets and queue. */
  poolStats(): PoolStats {
    return this.pool.stats();
  }

  /** Allocations whose every task runs, over all clients (the clients' own view). */
  runningAllocs(): number {
    let n = 0;
    for (const c of this.clients) for (const ar of c.allocRunners()) if (ar.clientUpdate().ClientStatus === 'running') n++;
    return n;
  }

  /** Stops every client (tasks are mock: they end with the process) and closes the pool. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.shutdown()));
    this.pool.destroy();
  }
}

/** Where a simulated client runs and what it talks to; the rest comes from its node. */
export interface SimulatedClientPlace {
  dataDir: string;
  connection: ServerConnection;
  hostVolumesDir: string;
  hostVolumePluginDir: string;
  logger: Logger;
}

/** Starts the project's own Client as simulated node `node`: mock driver, no state kept, no alloc dirs. */
export function startSimulatedClient(node: SimulatedNode, place: SimulatedClientPlace): Promise<Client> {
  return Client.start({
    ...place,
    nodeName: node.name,
    datacenter: node.datacenter,
    nodePool: node.nodePool,
    meta: node.meta,
    httpAddr: node.httpAddr,
    identity: node.identity,
    host: node.host,
    drivers: [createMockDriver()],
    store: new EphemeralStateStore(),
    allocDirsOnDisk: false,
  });
}
