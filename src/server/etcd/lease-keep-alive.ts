/**
 * Keeps etcd leases alive over one LeaseKeepAlive stream of an etcd client: a keep-alive for
 * every lease each TTL/3 (as etcd's Go client), and for each answer the time its keep-alive was
 * sent — etcd keeps the lease at least a TTL past that, so that is when the lease is confirmed
 * until. It runs wherever its client lives: on the lease keeper's worker thread
 * (lease-keeper-worker.ts), or on the caller's thread (InlineLeaseKeeper).
 *
 * A lease is lost when etcd answers it with no TTL left (expired or revoked), or when nothing
 * confirmed it for twice its TTL (etcd unreachable: it has surely expired). A failed stream is
 * opened again; keep-alives sent on it are never answered, so they confirm nothing.
 */
import type { Etcd3, IDuplexStream, ILeaseKeepAliveRequest, ILeaseKeepAliveResponse } from 'etcd3';
import { CaravanError } from '../../structs/caravan-error.js';
import { monotonicMs } from './monotonic-ms.js';

export interface LeaseKeepAliveOptions {
  client: Etcd3;
  ttlMs: number;
  /** etcd answered a keep-alive of `leaseId` sent at `sentAt` (monotonicMs()). */
  onConfirmed: (leaseId: string, sentAt: number) => void;
  /** `leaseId` is gone (it is no longer kept alive). */
  onLost: (leaseId: string, err: CaravanError<'ETCD_LEASE_LOST'>) => void;
}

/** Delay before a failed stream is opened again (ms). */
const REOPEN_MS = 100;

type KeepAliveStream = IDuplexStream<ILeaseKeepAliveRequest, ILeaseKeepAliveResponse>;

interface Kept {
  /** Send times of the keep-alives not yet answered on the current stream, oldest first. */
  fired: number[];
  confirmedAt: number;
}

export class LeaseKeepAlive {
  private readonly leases = new Map<string, Kept>();
  private stream: KeepAliveStream | null = null;
  private opening = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private reopen: NodeJS.Timeout | null = null;

  constructor(private readonly o: LeaseKeepAliveOptions) {
    this.timer = setInterval(() => this.fire(), Math.max(50, Math.floor(o.ttlMs / 3)));
    // The owner's close() ends it; the interval alone must not keep a process (or worker) alive.
    this.timer.unref();
  }

  /** Opens the stream ahead of the first lease, so its first keep-alive goes out at once. */
  connect(): void {
    if (!this.stream) this.open();
  }

  /** Keeps `leaseId` alive, confirmed as of `grantedAt` (when its grant was sent). */
  add(leaseId: string, grantedAt: number): void {
    if (this.closed || this.leases.has(leaseId)) return;
    this.leases.set(leaseId, { fired: [], confirmedAt: grantedAt });
    this.fire();
  }

  /** Stops keeping `leaseId` alive (it expires a TTL later unless revoked). */
  remove(leaseId: string): void {
    this.leases.delete(leaseId);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    if (this.reopen) clearTimeout(this.reopen);
    this.leases.clear();
    this.endStream();
  }

  /** Sends one keep-alive per lease (opening the stream first if there is none). */
  private fire(): void {
    if (this.closed || this.leases.size === 0) return;
    const now = monotonicMs();
    for (const [id, kept] of this.leases) {
      if (now - kept.confirmedAt > 2 * this.o.ttlMs) this.lose(id, 'not confirmed by etcd for twice its TTL');
    }
    if (this.leases.size === 0) return;
    const stream = this.stream;
    if (!stream) return void this.open();
    for (const [id, kept] of this.leases) {
      kept.fired.push(now);
      try {
        stream.write({ ID: id });
      } catch (err) {
        this.failed(stream, err);
        return;
      }
    }
  }

  private open(): void {
    if (this.opening || this.closed) return;
    this.opening = true;
    this.o.client.leaseClient.leaseKeepAlive().then(
      (stream) => {
        this.opening = false;
        if (this.closed) return void stream.end();
        this.stream = stream;
        stream.on('data', (res) => this.answered(stream, res));
        stream.on('error', (err) => this.failed(stream, err));
        stream.on('end', () => this.failed(stream, new Error('keep-alive stream ended')));
        this.fire();
      },
      (err: unknown) => {
        this.opening = false;
        this.failed(null, err);
      },
    );
  }

  private answered(stream: KeepAliveStream, res: ILeaseKeepAliveResponse): void {
    if (stream !== this.stream) return;
    const id = String(res.ID);
    const kept = this.leases.get(id);
    if (!kept) return;
    const sentAt = kept.fired.shift();
    if (Number(res.TTL) <= 0) return this.lose(id, 'etcd says it expired or was revoked');
    if (sentAt === undefined || sentAt <= kept.confirmedAt) return;
    kept.confirmedAt = sentAt;
    this.o.onConfirmed(id, sentAt);
  }

  /** The stream failed: its unanswered keep-alives never will be; open another shortly. */
  private failed(stream: KeepAliveStream | null, _err: unknown): void {
    if (stream !== this.stream) return;
    this.endStream();
    if (this.closed || this.reopen) return;
    this.reopen = setTimeout(() => {
      this.reopen = null;
      this.fire();
    }, REOPEN_MS);
    this.reopen.unref();
  }

  private endStream(): void {
    const s = this.stream;
    this.stream = null;
    for (const kept of this.leases.values()) kept.fired = [];
    if (!s) return;
    try {
      s.end();
    } catch {
      // already ended
    }
  }

  private lose(leaseId: string, reason: string): void {
    if (!this.leases.delete(leaseId)) return;
    this.o.onLost(leaseId, new CaravanError('ETCD_LEASE_LOST', { lease: leaseId, reason }));
  }
}
