/**
 * The lease keeper's worker thread: its own etcd client and event loop, keeping the server's
 * leases alive (LeaseKeepAlive) and storing each confirmation in the lease's shared slot. The
 * server's thread can be busy for seconds without its lease going unconfirmed; a stopped or
 * killed process stops this thread too, so its lease still lapses within the TTL.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openEtcdClient } from './etcd-connection.js';
import { LeaseKeepAlive } from './lease-keep-alive.js';
import type { FromLeaseWorker, LeaseKeeperWorkerData, ToLeaseWorker } from './lease-keeper-protocol.js';

const port = parentPort!;
const data = workerData as LeaseKeeperWorkerData;
const confirmations = new BigInt64Array(data.confirmations);
const client = openEtcdClient(data.config);
const slots = new Map<string, number>();

const post = (m: FromLeaseWorker): void => port.postMessage(m);

const keepAlive = new LeaseKeepAlive({
  client,
  ttlMs: data.ttlMs,
  onConfirmed: (id, sentAt) => {
    const slot = slots.get(id);
    if (slot !== undefined) Atomics.store(confirmations, slot, BigInt(sentAt));
  },
  onLost: (id, err) => {
    const slot = slots.get(id);
    slots.delete(id);
    if (slot !== undefined) post({ type: 'lost', leaseId: id, slot, reason: String(err.fields.reason) });
  },
});

keepAlive.connect();
post({ type: 'ready' });

port.on('message', (m: ToLeaseWorker) => {
  switch (m.type) {
    case 'keep':
      slots.set(m.leaseId, m.slot);
      keepAlive.add(m.leaseId, m.grantedAt);
      return;
    case 'release': {
      const slot = slots.get(m.leaseId);
      slots.delete(m.leaseId);
      keepAlive.remove(m.leaseId);
      if (slot !== undefined) post({ type: 'released', slot });
      return;
    }
    case 'close':
      keepAlive.close();
      client.close();
      port.close();
      return;
  }
});
