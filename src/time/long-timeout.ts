/**
 * setTimeout for any delay. Node.js fires a timer whose delay exceeds 2^31−1 ms (about 24.8
 * days) after 1 ms (with a TimeoutOverflowWarning); a periodic job a month away, a deadline or a
 * TTL of weeks would fire at once. setLongTimeout chains timers of at most MAX_TIMEOUT_MS, each
 * re-aimed at the deadline on the monotonic clock, so the callback runs once the whole delay has
 * passed and never before.
 */
import { performance } from 'node:perf_hooks';

/** The longest delay Node.js's setTimeout honours. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A cancellable long timer. */
export interface LongTimeout {
  cancel(): void;
  /** Lets the process exit while only this timer is pending. */
  unref(): void;
}

/**
 * Calls fn once after ms milliseconds (any finite delay; NaN or negative is 0), unless
 * cancelled. `chunkMs` caps each underlying timer (tests pass a small one to exercise chaining).
 */
export function setLongTimeout(fn: () => void, ms: number, chunkMs: number = MAX_TIMEOUT_MS): LongTimeout {
  const delay = Number.isFinite(ms) && ms > 0 ? ms : ms === Infinity ? Infinity : 0;
  const deadline = performance.now() + delay;
  const chunk = Math.max(1, Math.min(chunkMs, MAX_TIMEOUT_MS));
  let handle: NodeJS.Timeout | undefined;
  let unrefed = false;
  let cancelled = false;
  // Never calls fn synchronously (callers assign the returned handle before it may fire).
  const arm = (): void => {
    const left = deadline - performance.now();
    // Timers may fire up to a millisecond early; the next round covers the rest.
    handle = setTimeout(() => {
      if (cancelled) return;
      if (deadline - performance.now() > 0) return arm();
      handle = undefined;
      fn();
    }, Math.max(0, Math.min(Math.ceil(left), chunk)));
    if (unrefed) handle.unref();
  };
  arm();
  return {
    cancel() {
      cancelled = true;
      if (handle) clearTimeout(handle);
      handle = undefined;
    },
    unref() {
      unrefed = true;
      handle?.unref();
    },
  };
}
