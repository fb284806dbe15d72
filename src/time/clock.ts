/**
 * Time as a dependency. Long-running loops (eval broker, plan applier, task runner, restart
 * tracker) take a Clock so tests can drive time by hand; nothing in a pure core calls
 * Date.now() or setTimeout directly. Timers take any delay: the system clock chains Node.js
 * timers past their 2^31−1 ms limit (long-timeout.ts).
 */
import { setLongTimeout } from './long-timeout.js';

/** A cancellable timer handle. */
export interface Timer {
  cancel(): void;
  /** Lets the process exit while only this timer is pending (the system clock's timers). */
  unref?(): void;
}

/** The source of "now" and of timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls fn once after ms milliseconds, unless cancelled. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after ms milliseconds; rejects with the signal's reason if aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const t = setLongTimeout(fn, ms);
    return { cancel: () => t.cancel(), unref: () => t.unref() };
  },
  sleep(ms, signal) {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const t = setLongTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        t.cancel();
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock for tests: time moves only when advance() is called, and timers due by then fire
 * in order of their due time.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const t: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = this.setTimer(ms, () => resolve());
      signal?.addEventListener('abort', () => { timer.cancel(); reject(signal.reason); }, { once: true });
    });
  }

  /** Number of timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by ms, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.current + ms;
    while (this.fireNextDue(target));
    this.settle(target);
  }

  /** Advances time and lets promise callbacks run between timers. */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.current + ms;
    do await flushMicrotasks();
    while (this.fireNextDue(target));
    this.settle(target);
    await flushMicrotasks();
  }

  /** Fires the earliest timer due by `target`, if any; false when none is. */
  private fireNextDue(target: number): boolean {
    const due = this.timers
      .filter((t) => !t.cancelled && t.at <= target)
      .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
    if (!due) return false;
    due.cancelled = true;
    this.current = Math.max(this.current, due.at);
    due.fn();
    return true;
  }

  /** Drops fired and cancelled timers and stands the clock at `target`. */
  private settle(target: number): void {
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.current = target;
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise<void>((r) => setImmediate(r));
}

/** A source of randomness in [0, 1), injectable for deterministic tests. */
export type RandomSource = () => number;
