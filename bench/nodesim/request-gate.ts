/**
 * At most `limit` requests in flight; the rest wait in arrival order. The node simulator's
 * shared socket pools put this in front of their http.Agent so that the agent never queues:
 * node:http's Agent keeps waiting requests in an array and takes each with shift(), which is
 * O(waiting) — with 10,000 nodes' fetches and alloc updates waiting for 256 sockets it was the
 * simulator's costliest node:http function (1.6 s of scenario 2 at 10,000 nodes). Here the
 * queue is an array read from a moving head: O(1) a request.
 */
export class RequestGate {
  private inFlight = 0;
  private waiting: ((() => void) | undefined)[] = [];
  private head = 0;

  constructor(private readonly limit: number) {}

  /** Runs `start` now if a slot is free, else when one is; `start` must lead to one release(). */
  acquire(start: () => void): void {
    if (this.inFlight < this.limit) {
      this.inFlight++;
      start();
    } else {
      this.waiting.push(start);
    }
  }

  /** Frees a slot: the longest-waiting request takes it. */
  release(): void {
    if (this.head < this.waiting.length) {
      const next = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined;
      // Drop the consumed prefix now and then (amortised O(1)).
      if (this.head >= 1024 && this.head * 2 >= this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
      next();
    } else {
      this.inFlight--;
    }
  }

  /** Requests waiting for a slot. */
  queued(): number {
    return this.waiting.length - this.head;
  }
}
