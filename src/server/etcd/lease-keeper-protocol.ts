/**
 * Messages between WorkerLeaseKeeper (the server's thread) and its worker
 * (lease-keeper-worker.ts). Confirmations do not travel as messages: the worker stores each
 * lease's confirmation time in its slot of a shared BigInt64Array, which the server's thread
 * reads with Atomics.load whenever it decides whether it leads — a message would wait for the
 * very event loop that may be busy.
 */
import type { EtcdConfig } from './etcd-connection.js';

/** How many leases one keeper can keep at once (one per server, two while one is revoked). */
export const LEASE_SLOTS = 16;

export interface LeaseKeeperWorkerData {
  config: EtcdConfig;
  ttlMs: number;
  /** LEASE_SLOTS × 8 bytes: per slot, the confirmation time (monotonicMs(): the same clock on both threads), 0 when free. */
  confirmations: SharedArrayBuffer;
}

export type ToLeaseWorker =
  | { type: 'keep'; leaseId: string; slot: number; grantedAt: number }
  | { type: 'release'; leaseId: string }
  | { type: 'close' };

export type FromLeaseWorker =
  /** The worker has its client (sent once, first). */
  | { type: 'ready' }
  /** The lease is lost (no longer kept); its slot is free again. */
  | { type: 'lost'; leaseId: string; slot: number; reason: string }
  /** The worker no longer writes to this slot (after a release). */
  | { type: 'released'; slot: number };
