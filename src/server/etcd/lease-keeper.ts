/**
 * Where a server's etcd leases are kept alive, and how the leadership reads when etcd last
 * confirmed one. The leadership grants a lease, hands it to a keeper, and asks confirmedAt()
 * whenever it decides whether it still leads; the keeper tells it when a lease is lost.
 *
 * WorkerLeaseKeeper (worker-lease-keeper.ts) keeps them on a worker thread with its own etcd
 * client, so a server whose main thread is busy (GC, a large plan, a herd of requests) keeps its
 * lease; InlineLeaseKeeper keeps them on the caller's thread and client (tests that bring their
 * own client, and what the servers did before the worker).
 */
import type { Etcd3 } from 'etcd3';
import type { CaravanError } from '../../structs/caravan-error.js';
import { LeaseKeepAlive } from './lease-keep-alive.js';

/** Why a kept lease was lost. */
export type LeaseLossError = CaravanError<'ETCD_LEASE_LOST'> | CaravanError<'ETCD_LEASE_KEEPER_FAILED'>;

export interface LeaseKeeper {
  /**
   * Prepares to keep leases (starts a worker); resolves once the keeper can keep one (grant a
   * lease only then: a lease granted before is not kept alive while the worker starts, ~0.5 s
   * and more on a loaded machine). Never rejects.
   */
  open(): Promise<void>;
  /**
   * Keeps `leaseId` alive from now on, confirmed as of `grantedAt` (when its grant was sent);
   * `onLost` is called once if it is lost (it is then no longer kept).
   */
  keep(leaseId: string, grantedAt: number, onLost: (err: LeaseLossError) => void): void;
  /** When the newest keep-alive etcd answered for `leaseId` was sent (monotonicMs()), or null if it is not kept. */
  confirmedAt(leaseId: string): number | null;
  /** Stops keeping `leaseId` alive (the caller revokes it). */
  release(leaseId: string): void;
  /** Stops keeping every lease and frees what the keeper holds (its worker, its client). */
  close(): Promise<void>;
}

/** Keeps leases alive on the caller's thread, over its client. */
export class InlineLeaseKeeper implements LeaseKeeper {
  private readonly confirmed = new Map<string, number>();
  private readonly lost = new Map<string, (err: LeaseLossError) => void>();
  private readonly keepAlive: LeaseKeepAlive;

  constructor(client: Etcd3, ttlMs: number) {
    this.keepAlive = new LeaseKeepAlive({
      client,
      ttlMs,
      onConfirmed: (id, sentAt) => {
        if (this.confirmed.has(id)) this.confirmed.set(id, sentAt);
      },
      onLost: (id, err) => {
        const onLost = this.lost.get(id);
        this.release(id);
        onLost?.(err);
      },
    });
  }

  async open(): Promise<void> {}

  keep(leaseId: string, grantedAt: number, onLost: (err: LeaseLossError) => void): void {
    this.confirmed.set(leaseId, grantedAt);
    this.lost.set(leaseId, onLost);
    this.keepAlive.add(leaseId, grantedAt);
  }

  confirmedAt(leaseId: string): number | null {
    return this.confirmed.get(leaseId) ?? null;
  }

  release(leaseId: string): void {
    this.confirmed.delete(leaseId);
    this.lost.delete(leaseId);
    this.keepAlive.remove(leaseId);
  }

  async close(): Promise<void> {
    this.confirmed.clear();
    this.lost.clear();
    this.keepAlive.close();
  }
}
