/**
 * Lets a long evaluation give the event loop back. The scheduling workers run on the server's
 * main thread, beside every HTTP request: a system job's evaluation over 10,000 nodes computes
 * for ~0.5 s, and a 2,000-placement service plan for as long, and every heartbeat, allocation
 * watch and job registration arriving meanwhile waited for all of it (Nomad's workers run in
 * parallel with its RPC handlers). A scheduler calls `maybeYield()` between nodes and
 * placements: once its slice is spent it waits one turn of the loop (setImmediate, after the
 * pending I/O), so a request waits at most about a slice.
 *
 * Yielding changes no result: the scheduler reads a copy-on-write snapshot that later writes do
 * not move, and draws its random numbers in the same order.
 */

/** How long a scheduler computes before letting the loop serve others (ms). */
export const DEFAULT_SLICE_MS = 10;

/** One evaluation's time on the loop, measured from its start or its last yield. */
export class LoopSlice {
  private sliceStart = performance.now();
  /** How many times this evaluation let the loop run. */
  yields = 0;

  /** `sliceMs` 0 yields at every check (tests); Infinity never yields. */
  constructor(private readonly sliceMs: number = DEFAULT_SLICE_MS) {}

  /**
   * Undefined while the slice lasts (the caller goes on without a microtask hop); after it, a
   * promise resolved on the loop's next turn: `const y = slice.maybeYield(); if (y) await y;`.
   */
  maybeYield(): Promise<void> | undefined {
    if (performance.now() - this.sliceStart < this.sliceMs) return undefined;
    return this.yieldNow();
  }

  private async yieldNow(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.yields++;
    this.sliceStart = performance.now();
  }
}
