/**
 * Batches allocation updates to the servers: updates are coalesced per allocation (the newest
 * wins) and sent together at most every `intervalMs` (50 ms). The first change after a quiet
 * period goes out at once. A change of an allocation's ClientStatus to running or a terminal
 * status does not wait for the interval either — it goes out as soon as no send is in flight —
 * because schedulers, deployments and users wait on exactly those transitions (a new alloc's
 * pending report followed 20 ms later by running would otherwise sit out the interval). Sends
 * are never concurrent, so under load whatever arrives during one send forms the next batch.
 * Failed sends are retried with backoff, keeping any newer update of the same allocation.
 */
import type { Clock, Timer } from '../time/clock.js';
import { isTerminalClientStatus, type AllocClientStatus } from '../structs/index.js';
import type { AllocClientUpdate } from '../structs/alloc.js';

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
  /** The ClientStatus last sent per allocation (dropped once a terminal status is sent). */
  private readonly sentStatus = new Map<string, AllocClientStatus>();
  /** When the pending timer fires (clock ms), to tell whether an urgent update must pull it in. */
  private timerAt = Infinity;

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
    this.timerAt = Infinity;
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
    if (this.inFlight || this.pending.size === 0 || this.stopped) return;
    const wait = this.failures > 0
      ? Math.max(0, this.lastSend + Math.min(this.intervalMs * 2 ** this.failures, MAX_RETRY_MS) - this.clock.now())
      : this.hasTransition() ? 0 : Math.max(0, this.lastSend + this.intervalMs - this.clock.now());
    const at = this.clock.now() + wait;
    if (this.timer) {
      if (at >= this.timerAt) return;
      this.timer.cancel();
    }
    this.timerAt = at;
    this.timer = this.clock.setTimer(wait, () => {
      this.timer = null;
      this.timerAt = Infinity;
      void this.sendNow();
    });
  }

  /** Whether a queued update moves its allocation to running or a terminal status. */
  private hasTransition(): boolean {
    for (const u of this.pending.values()) {
      if (u.ClientStatus !== 'pending' && this.sentStatus.get(u.ID) !== u.ClientStatus) return true;
    }
    return false;
  }

  private sendNow(): Promise<void> {
    const batch = [...this.pending.values()];
    this.pending.clear();
    this.lastSend = this.clock.now();
    const p = this.send(batch).then(
      () => {
        this.failures = 0;
        for (const u of batch) {
          if (isTerminalClientStatus(u.ClientStatus)) this.sentStatus.delete(u.ID);
          else this.sentStatus.set(u.ID, u.ClientStatus);
        }
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
