/**
 * Holding requests while the cluster has no leader (Nomad's RPCHoldTimeout): a server that
 * knows no leader — during an election, after the leader died — or that leads but has not
 * caught up with the log yet does not refuse a request at once; it looks again until a leader
 * is known and ready, or until the hold time is over, and only then answers `No cluster leader`
 * (or `Not ready to serve consistent reads`). A write sent during a failover is then answered by
 * the new leader instead of failing, and a client does not spend its retries (and its heartbeat
 * TTL) on the seconds an election takes.
 *
 * During an election every client's heartbeat, allocation watch and update may be held at once
 * (thousands): one timer looks again for all of them, not one per request. When a leader is
 * known they are let go writes first, then reads RELEASE_SLICE at a time with a turn of the event
 * loop between slices: a new leader answering every client's blocking allocation watch at once
 * holds its loop for the whole herd, and the writes it must acknowledge (a heartbeat, a job
 * registration — its log entries are applied on that loop) wait behind them. A read let go a
 * few turns later loses nothing: it is a blocking query that would wait anyway.
 */
import type { Clock, Timer } from '../../time/clock.js';
import { onAbort } from '../abort-fanout.js';
import type { LeaderRoute } from './leader-forward.js';

/** Nomad's RPCHoldTimeout: 5 s. */
export const DEFAULT_LEADER_HOLD_MS = 5_000;
/** How often held requests look again (each look is a few field reads). */
export const LEADER_HOLD_RECHECK_MS = 50;
/** How many held reads are let go in one turn of the event loop (writes all go at once, first). */
export const RELEASE_SLICE = 100;

/** What a held request is: writes are let go before reads (see the file comment). */
export type HeldKind = 'read' | 'write';

/** True for the routes that wait for a leader (or for the leader to catch up). */
export function waitsForLeader(r: LeaderRoute): boolean {
  return r.kind === 'no-leader' || r.kind === 'not-ready';
}

interface Waiter {
  kind: HeldKind;
  route: () => LeaderRoute;
  deadline: number;
  resolve: (r: LeaderRoute) => void;
  last: LeaderRoute;
}

/** The held requests of one server's HTTP API. */
export class LeaderHold {
  private readonly waiters = new Set<Waiter>();
  /** Reads whose route is settled, waiting for their slice (in the order they were found so). */
  private readonly ready: Waiter[] = [];
  private timer: Timer | null = null;

  /**
   * @param holdMs how long a request is held at most (0: never held)
   * @param shutdown aborted when the agent closes: every held request is answered at once
   */
  constructor(
    private readonly clock: Pick<Clock, 'now' | 'setTimer'>,
    private readonly holdMs: number,
    shutdown: AbortSignal,
    private readonly recheckMs = LEADER_HOLD_RECHECK_MS,
  ) {
    onAbort(shutdown, () => this.releaseAll());
  }

  /**
   * Resolves the request's route: at once unless it waits for a leader; else once it no longer
   * does, or with the last route seen when the hold time is over or `gone` aborts (the caller
   * left). Never rejects.
   */
  wait(route: () => LeaderRoute, gone: AbortSignal, kind: HeldKind = 'write'): Promise<LeaderRoute> {
    const first = route();
    if (!waitsForLeader(first) || this.holdMs <= 0 || gone.aborted) return Promise.resolve(first);
    return new Promise((resolve) => {
      const w: Waiter = { kind, route, deadline: this.clock.now() + this.holdMs, last: first, resolve: () => undefined };
      const off = onAbort(gone, () => this.release(w));
      w.resolve = (r) => {
        off();
        resolve(r);
      };
      this.waiters.add(w);
      this.arm();
    });
  }

  /** Requests held now. */
  size(): number {
    return this.waiters.size;
  }

  private arm(): void {
    if (this.timer || this.waiters.size === 0) return;
    // Reads still to let go: the next slice after one turn of the loop, not after a recheck.
    this.timer = this.clock.setTimer(this.ready.length > 0 ? 0 : this.recheckMs, () => {
      this.timer = null;
      this.tick();
      this.arm();
    });
  }

  private tick(): void {
    const now = this.clock.now();
    const queued = new Set(this.ready);
    for (const w of this.waiters) {
      if (queued.has(w)) continue;
      w.last = w.route();
      if (!waitsForLeader(w.last) || now >= w.deadline) {
        if (w.kind === 'write') this.release(w);
        else this.ready.push(w);
      }
    }
    let i = 0;
    for (let n = 0; i < this.ready.length && n < RELEASE_SLICE; i++) {
      const w = this.ready[i]!;
      if (!this.waiters.has(w)) continue; // its caller left meanwhile
      // Looked at again: the leader it found may be gone by its turn (it then waits on).
      w.last = w.route();
      if (waitsForLeader(w.last) && now < w.deadline) continue;
      this.release(w);
      n++;
    }
    this.ready.splice(0, i);
  }

  private release(w: Waiter): void {
    if (!this.waiters.delete(w)) return;
    w.resolve(w.last);
  }

  private releaseAll(): void {
    this.timer?.cancel();
    this.timer = null;
    this.ready.length = 0;
    for (const w of [...this.waiters]) this.release(w);
  }
}
