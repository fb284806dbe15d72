/**
 * Batches allocation updates to the servers: updates are coalesced per allocation (the newest
 * wins) and sent together at most every `intervalMs` (50 ms). The first change after a quiet
 * period goes out at once, so a task's transition to running reaches the servers quickly;
 * changes that follow within the interval wait for the next batch. Failed sends are retried
 * with backoff, keeping any newer update of the same allocation.
 */
import type { Clock, Timer } from '../time/clock.js';
import type { AllocClientUpdate } from '../server/server-api.js';

/** Default batching interval. */
export const ALLOC_UPDATE_INTERVAL_MS = 50;
const MAX_RETRY_MS = 5_000;

/** Coalesces and sends AllocClientUpdates. */
export class AllocUpdateBatcher {
  private pending = new Map<string, AllocClientUpdate>();
  private timer: Timer | null = null;
  private inFlight: Promise<void> | null = null;
  private lastSend = -Infinity;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly send: (updates: AllocClientUpdate[]) => Promise<void>,
    private readonly clock: Clock,
    private readonly intervalMs = ALLOC_UPDATE_INTERVAL_MS,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /** Queues an update; replaces a queued update of the same allocation. */
  enqueue(update: AllocClientUpdate): void {
    if (this.stopped) return;
    this.pending.set(update.ID, update);
    this.schedule();
  }

  /** Number of allocations waiting to be sent. */
  size(): number {
    return this.pending.size;
  }

  /** Sends whatever is queued now and waits for it (used at shutdown). */
  async flush(): Promise<void> {
    this.timer?.cancel();
    this.timer = null;
    if (this.inFlight) await this.inFlight;
    if (this.pending.size > 0) await this.sendNow();
  }

  /** Stops sending; queued updates are dropped. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer || this.inFlight || this.pending.size === 0 || this.stopped) return;
    const backoff = this.failures > 0 ? Math.min(this.intervalMs * 2 ** this.failures, MAX_RETRY_MS) : this.intervalMs;
    const wait = Math.max(0, this.lastSend + backoff - this.clock.now());
    this.timer = this.clock.setTimer(wait, () => {
      this.timer = null;
      void this.sendNow();
    });
  }

  private sendNow(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.lastSend = this.clock.now();
    const p = this.send(batch).then(
      () => {
        this.failures = 0;
      },
      (err: unknown) => {
        this.failures++;
        this.onError(err);
        // Put back what has not been superseded meanwhile.
        for (const u of batch) if (!this.pending.has(u.ID)) this.pending.set(u.ID, u);
      },
    );
    this.inFlight = p.finally(() => {
      this.inFlight = null;
      this.schedule();
    });
    return this.inFlight;
  }
}
