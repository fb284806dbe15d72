/**
 * The etcd footprint scenario of the fault suite (issue 33, item 4): N small jobs registered
 * through the leader of three servers on one etcd, with Caravan's default snapshot threshold; the
 * figures are etcd's own (Status: database size and the part in use), the keys and snapshot sets
 * under the prefix, and the size of etcd's data dir. The peak database size is sampled meanwhile.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { FaultCluster } from './fault-cluster.js';
import { call, registerJob, sleep } from './fault-workload.js';

export interface FootprintReport {
  jobs: number;
  durationMs: number;
  dbSizeBytes: number;
  dbSizeInUseBytes: number;
  peakDbSizeBytes: number;
  dataDirBytes: number;
  keys: number;
  snapshotSets: number;
  snapshotBytes: number;
}

const CONCURRENCY = 16;

export async function runFootprint(o: { jobs: number; snapshotThreshold: number; log?: (line: string) => void }): Promise<FootprintReport> {
  const log = o.log ?? (() => undefined);
  const cluster = await FaultCluster.start({ leaseTtlSeconds: 2, snapshotThreshold: o.snapshotThreshold, clients: 0 });
  const client = openEtcdClient({ endpoints: [cluster.etcd.endpoint(0)] });
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const s = await client.maintenance.status().catch(() => null);
      if (s) peak = Math.max(peak, Number(s.dbSize));
      await sleep(2000);
    }
  })();
  try {
    const t0 = performance.now();
    let next = 0;
    let done = 0;
    const worker = async (): Promise<void> => {
      while (next < o.jobs) {
        const i = next++;
        for (;;) {
          const leader = cluster.servers.find((s) => s.agent);
          const res = leader ? await call(cluster.address(leader), 'PUT', '/v1/jobs', registerJob(`footprint-${i}`, String(i))) : null;
          if (res?.status === 200) break;
          await sleep(100);
        }
        if (++done % 2000 === 0) log(`  ${done} jobs, ${((performance.now() - t0) / 1000).toFixed(0)} s, etcd db peak so far ${(peak / 2 ** 20).toFixed(1)} MiB`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const durationMs = performance.now() - t0;
    // Let the last snapshot and its compaction finish.
    await sleep(5000);
    const status = await client.maintenance.status();
    const keys = await client.getAll().prefix('/faults/').count();
    const pieces = await client.getAll().prefix('/faults/snap/c/').buffers();
    const sets = new Set(Object.keys(pieces).map((k) => k.slice('/faults/snap/c/'.length).split('/')[0]));
    const dataDirBytes = Number(execFileSync('du', ['-sb', cluster.etcd.dataDir(0)], { encoding: 'utf8' }).split('\t')[0]);
    return {
      jobs: o.jobs,
      durationMs,
      dbSizeBytes: Number(status.dbSize),
      dbSizeInUseBytes: Number((status as { dbSizeInUse?: string }).dbSizeInUse ?? 0),
      peakDbSizeBytes: Math.max(peak, Number(status.dbSize)),
      dataDirBytes,
      keys,
      snapshotSets: sets.size,
      snapshotBytes: Object.values(pieces).reduce((n, b) => n + b.length, 0),
    };
  } finally {
    sampling = false;
    await sampler;
    client.close();
    await cluster.stop();
  }
}
