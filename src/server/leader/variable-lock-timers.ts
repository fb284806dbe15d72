/**
 * The leader's timers over variable locks (Nomad keeps these on the leader only): each held lock
 * expires TTL after its acquire or last renewal, unless released first. On expiry the leader
 * releases the lock through the log and the variable may not be locked again until the lock's
 * LockDelay has passed. The locks themselves are replicated state; a new leader (or a restarted
 * one) gives every held lock a whole fresh TTL, as Nomad's does, and knows of no delay. Timers
 * take any TTL (the clock chains Node.js timers past their 24.8-day limit).
 */
import { NANOS_PER_MS, parseDuration } from '../../structs/duration.js';
import type { VariableLock } from '../../structs/variable.js';
import type { Clock, Timer } from '../../time/clock.js';

const key = (namespace: string, path: string): string => `${namespace}\u0000${path}`;

/** A lock's TTL or delay in milliseconds (a malformed one: 0). */
export function lockDurationMs(d: string): number {
  try {
    return Math.max(0, parseDuration(d) / NANOS_PER_MS);
  } catch {
    return 0;
  }
}

export interface VariableLockTimersDeps {
  clock: Clock;
  /** Releases an expired lock through the log (only if `lockId` still holds it). */
  expire(namespace: string, path: string, lockId: string): Promise<void>;
  onError(err: unknown): void;
}

export class VariableLockTimers {
  private readonly ttl = new Map<string, { lockId: string; timer: Timer }>();
  /** When each variable whose lock expired may be locked again (ms since the epoch). */
  private readonly delayUntil = new Map<string, number>();
  private stopped = false;

  constructor(private readonly deps: VariableLockTimersDeps) {}

  /** Gives every held lock a fresh TTL (leadership gained). */
  start(locked: Iterable<{ Namespace: string; Path: string; Lock?: VariableLock }>): void {
    for (const v of locked) if (v.Lock) this.arm(v.Namespace, v.Path, v.Lock);
  }

  /** (Re)starts the lock's TTL: at acquire and at each renewal. */
  arm(namespace: string, path: string, lock: VariableLock): void {
    if (this.stopped) return;
    const k = key(namespace, path);
    this.ttl.get(k)?.timer.cancel();
    this.delayUntil.delete(k);
    const timer = this.deps.clock.setTimer(lockDurationMs(lock.TTL), () => {
      if (this.ttl.get(k)?.timer !== timer) return;
      this.ttl.delete(k);
      this.delayUntil.set(k, this.deps.clock.now() + lockDurationMs(lock.LockDelay));
      this.deps.expire(namespace, path, lock.ID).catch((err: unknown) => this.deps.onError(err));
    });
    this.ttl.set(k, { lockId: lock.ID, timer });
  }

  /** Stops the TTL of a released lock (no delay follows an explicit release). */
  cancel(namespace: string, path: string): void {
    const k = key(namespace, path);
    this.ttl.get(k)?.timer.cancel();
    this.ttl.delete(k);
  }

  /** Whether the variable's lock expired less than its LockDelay ago. */
  inDelay(namespace: string, path: string): boolean {
    const k = key(namespace, path);
    const until = this.delayUntil.get(k);
    if (until === undefined) return false;
    if (this.deps.clock.now() < until) return true;
    this.delayUntil.delete(k);
    return false;
  }

  /** Cancels every timer (leadership lost). */
  stop(): void {
    this.stopped = true;
    for (const { timer } of this.ttl.values()) timer.cancel();
    this.ttl.clear();
    this.delayUntil.clear();
  }
}
