/**
 * Keeps a server's etcd leases alive on a worker thread (lease-keeper-worker.ts) with its own
 * etcd client and event loop. Raft keeps its heartbeats off the state machine's path; this is the
 * same for the etcd lease: the server's thread may stall for seconds (GC, a 10,000-node plan, a
 * herd of held requests) and its lease stays confirmed, because confirmations land in shared
 * memory the server's thread reads without waiting for a message. A stopped or killed process
 * stops the worker too, so its lease still lapses within the TTL.
 *
 * The worker never keeps the process alive (unref'd), and if it fails, every lease it kept is
 * reported lost with ETCD_LEASE_KEEPER_FAILED and the next keep() starts a new one.
 */
import { Worker } from 'node:worker_threads';
import type pino from 'pino';
import { CaravanError } from '../../structs/caravan-error.js';
import type { EtcdConfig } from './etcd-connection.js';
import type { LeaseKeeper, LeaseLossError } from './lease-keeper.js';
import { LEASE_SLOTS, type FromLeaseWorker, type LeaseKeeperWorkerData, type ToLeaseWorker } from './lease-keeper-protocol.js';

export interface WorkerLeaseKeeperOptions {
  /** The etcd cluster (the worker opens its own client to it). */
  config: EtcdConfig;
  ttlMs: number;
  logger?: pino.Logger;
}

/** How long close() waits for the worker to end by itself before terminating it (ms). */
const CLOSE_WAIT_MS = 2000;

export class WorkerLeaseKeeper implements LeaseKeeper {
  private readonly confirmations: BigInt64Array;
  private readonly data: LeaseKeeperWorkerData;
  private worker: Worker | null = null;
  /** Settles when the current worker is ready (or failed before it was). */
  private ready: Promise<void> = Promise.resolve();
  private settleReady: (() => void) | null = null;
  private readonly kept = new Map<string, { slot: number; onLost: (err: LeaseLossError) => void }>();
  /** Slots the worker may still write: kept leases, and released ones it has not acknowledged. */
  private readonly busy = new Set<number>();
  private closed = false;

  constructor(private readonly o: WorkerLeaseKeeperOptions) {
    const buffer = new SharedArrayBuffer(LEASE_SLOTS * BigInt64Array.BYTES_PER_ELEMENT);
    this.confirmations = new BigInt64Array(buffer);
    this.data = { config: o.config, ttlMs: o.ttlMs, confirmations: buffer };
  }

  open(): Promise<void> {
    if (this.worker || this.closed) return this.ready;
    const worker = new Worker(new URL('./lease-keeper-worker.js', import.meta.url), { workerData: this.data });
    this.worker = worker;
    this.ready = new Promise((resolve) => (this.settleReady = resolve));
    worker.on('message', (m: FromLeaseWorker) => this.onMessage(m));
    worker.on('error', (err) => this.failed(worker, err.message));
    worker.on('exit', (code) => this.failed(worker, `exited (code ${code})`));
    // The server's close() ends it; it must not keep a server's process alive by itself.
    worker.unref();
    return this.ready;
  }

  keep(leaseId: string, grantedAt: number, onLost: (err: LeaseLossError) => void): void {
    if (this.kept.has(leaseId)) return;
    void this.open();
    const slot = this.freeSlot();
    if (this.closed || !this.worker || slot === null) {
      const reason = this.closed ? 'closed' : slot === null ? `more than ${LEASE_SLOTS} leases kept at once` : 'no worker';
      queueMicrotask(() => onLost(new CaravanError('ETCD_LEASE_KEEPER_FAILED', { reason })));
      return;
    }
    this.busy.add(slot);
    Atomics.store(this.confirmations, slot, BigInt(grantedAt));
    this.kept.set(leaseId, { slot, onLost });
    this.post({ type: 'keep', leaseId, slot, grantedAt });
  }

  confirmedAt(leaseId: string): number | null {
    const k = this.kept.get(leaseId);
    return k ? Number(Atomics.load(this.confirmations, k.slot)) : null;
  }

  release(leaseId: string): void {
    const k = this.kept.get(leaseId);
    if (!k) return;
    this.kept.delete(leaseId);
    // The slot stays busy until the worker says it will not write it again.
    if (this.worker) this.post({ type: 'release', leaseId });
    else this.busy.delete(k.slot);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.kept.clear();
    const worker = this.worker;
    this.worker = null;
    this.readied();
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' } satisfies ToLeaseWorker);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), CLOSE_WAIT_MS);
      timer.unref();
    });
    if ((await Promise.race([exited, late])) === 'late') await worker.terminate();
    clearTimeout(timer);
  }

  private readied(): void {
    this.settleReady?.();
    this.settleReady = null;
  }

  private post(m: ToLeaseWorker): void {
    this.worker?.postMessage(m);
  }

  private freeSlot(): number | null {
    for (let i = 0; i < LEASE_SLOTS; i++) if (!this.busy.has(i)) return i;
    return null;
  }

  private onMessage(m: FromLeaseWorker): void {
    if (m.type === 'ready') return this.readied();
    this.busy.delete(m.slot);
    if (m.type !== 'lost') return;
    const k = this.kept.get(m.leaseId);
    if (!k || k.slot !== m.slot) return; // released meanwhile
    this.kept.delete(m.leaseId);
    k.onLost(new CaravanError('ETCD_LEASE_LOST', { lease: m.leaseId, reason: m.reason }));
  }

  /** The worker failed or ended on its own: what it kept is lost; a new one starts on the next keep(). */
  private failed(worker: Worker, reason: string): void {
    if (worker !== this.worker) return;
    this.worker = null;
    this.readied();
    const err = new CaravanError('ETCD_LEASE_KEEPER_FAILED', { reason });
    this.o.logger?.error({ err: err.message, code: err.code }, 'etcd leadership: lease keep-alive worker failed');
    const kept = [...this.kept.values()];
    this.kept.clear();
    this.busy.clear();
    for (const k of kept) k.onLost(err);
  }
}
