/**
 * What a server runs on etcd: one client shared by the etcd log backend and the etcd
 * leadership (the backend's fence is the leadership's), closed once both are closed.
 */
import type pino from 'pino';
import { EtcdLogBackend } from '../log/etcd-log-backend.js';
import { EtcdLeadership } from '../leadership/etcd-leadership.js';
import { DEFAULT_LEASE_TTL_SECONDS, etcdPrefix, openEtcdClient, type EtcdConfig } from './etcd-connection.js';
import { WorkerLeaseKeeper } from './worker-lease-keeper.js';

export interface EtcdReplication {
  log: EtcdLogBackend;
  leadership: EtcdLeadership;
}

/** Opens the client, the log and the leadership of server `self` on the etcd cluster of `config`. */
export function openEtcdReplication(config: EtcdConfig, self: { id: string; name: string; address: string }, logger?: pino.Logger): EtcdReplication {
  const client = openEtcdClient(config);
  const prefix = etcdPrefix(config);
  const ttlSeconds = config.leaseTtlSeconds ?? DEFAULT_LEASE_TTL_SECONDS;
  let users = 2;
  const release = (): void => {
    if (--users === 0) client.close();
  };
  const leaseKeeper = new WorkerLeaseKeeper({ config, ttlMs: ttlSeconds * 1000, ...(logger ? { logger } : {}) });
  // The worker loads its own etcd client (~0.5 s, more under load) while the server opens its
  // state; leadership grants its first lease only once the worker can keep it.
  void leaseKeeper.open();
  const leadership = new EtcdLeadership({
    client,
    prefix,
    ...self,
    leaseTtlSeconds: ttlSeconds,
    ...(logger ? { logger } : {}),
    // Keep-alives on a worker thread with its own client: a busy server keeps its lease.
    leaseKeeper,
    onClose: release,
  });
  const log = new EtcdLogBackend({ client, prefix, fence: () => leadership.fence(), onClose: release });
  return { log, leadership };
}
