/**
 * The eval broker: at-least-once delivery of evaluations to scheduler workers.
 *
 *   enqueue ─► (delayed until WaitUntil) ─► ready[type] (by priority) ─► dequeue ─► unacked
 *                                  ▲                                          │ ack ─► done
 *                                  └──── nack / nack timeout (with delay) ◄───┘
 *                                        delivery limit reached ─► failed (onFailed)
 *
 * At most one evaluation per job is ready or unacked; later ones wait in a per-job pending
 * list, and when the job's slot frees the newest pending one goes ahead while the older ones
 * are handed to onCancelable (they are superseded). Takes a Clock; no timers of its own.
 */
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';
import { randomUUID } from 'node:crypto';
import type { Evaluation } from '../../structs/index.js';
import type { Clock, Timer } from '../../time/clock.js';
import { EvalHeap } from './eval-heap.js';

/** Broker errors; `code` says which. */
export class EvalBrokerError extends CaravanError<'EVAL_NOT_OUTSTANDING' | 'TOKEN_MISMATCH' | 'BROKER_DISABLED'> {
  constructor(code: 'EVAL_NOT_OUTSTANDING' | 'TOKEN_MISMATCH' | 'BROKER_DISABLED', reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'EvalBrokerError';
  }
}

export interface EvalBrokerConfig {
  clock: Clock;
  /** How long a dequeued eval may stay unacked before it is nacked. Default 60 s. */
  nackTimeoutMs?: number;
  /** Deliveries after which an eval goes to the failed queue. Default 3. */
  deliveryLimit?: number;
  /** Delay before a nacked eval is ready again, first nack. Default 1 s. */
  initialNackDelayMs?: number;
  /** Delay unit for later nacks: the n-th delivery's nack waits (n-1) × this. Default 20 s. */
  subsequentNackDelayMs?: number;
  /** Called with an eval that reached the delivery limit. */
  onFailed?: (e: Evaluation) => void;
  /** Called with pending evals superseded by a newer one of the same job. */
  onCancelable?: (evals: Evaluation[]) => void;
}

/** A dequeued evaluation and the token that acks or nacks it. */
export interface Dequeued {
  eval: Evaluation;
  token: string;
}

interface Unacked {
  eval: Evaluation;
  token: string;
  /** Null while the nack timeout is paused (a plan of the eval is queued). */
  timer: Timer | null;
}

interface Waiter {
  schedulers: string[];
  resolve: (d: Dequeued | null) => void;
  timer: Timer | null;
}

/** Counts for metrics and tests. */
export interface EvalBrokerStats {
  ready: number;
  unacked: number;
  pending: number;
  delayed: number;
  failed: number;
  byScheduler: Record<string, number>;
}

function jobKeyOf(e: Evaluation): string {
  return `${e.Namespace}\u0000${e.JobID}`;
}

/** At-least-once evaluation queue with per-job serialization (see the file comment). */
export class EvalBroker {
  private readonly clock: Clock;
  private readonly nackTimeoutMs: number;
  private readonly deliveryLimit: number;
  private readonly initialNackDelayMs: number;
  private readonly subsequentNackDelayMs: number;
  private enabled = true;
  private paused = false;
  private readonly ready = new Map<string, EvalHeap>();
  private readonly unacked = new Map<string, Unacked>();
  /** Job key → ID of the eval holding the job's slot (ready or unacked). */
  private readonly jobSlot = new Map<string, string>();
  private readonly pending = new Map<string, Evaluation[]>();
  private readonly delayed = new Map<string, { eval: Evaluation; timer: Timer }>();
  private readonly deliveries = new Map<string, number>();
  private waiters: Waiter[] = [];
  private failedCount = 0;

  constructor(private readonly config: EvalBrokerConfig) {
    this.clock = config.clock;
    this.nackTimeoutMs = config.nackTimeoutMs ?? 60_000;
    this.deliveryLimit = config.deliveryLimit ?? 3;
    this.initialNackDelayMs = config.initialNackDelayMs ?? 1_000;
    this.subsequentNackDelayMs = config.subsequentNackDelayMs ?? 20_000;
  }

  /** Enables or disables the broker; disabling flushes everything (leadership lost, shutdown). */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    if (!enabled) this.flush();
  }

  /** Deliveries after which an eval goes to the failed queue. */
  get limit(): number {
    return this.deliveryLimit;
  }

  isEnabled(): boolean {
    return this.enabled;
  }

  /** Stops handing out evaluations (enqueues still accepted). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.serveWaiters();
  }

  /** Drops every queued, pending, delayed and unacked eval; waiting dequeues get null. */
  flush(): void {
    for (const u of this.unacked.values()) u.timer?.cancel();
    for (const d of this.delayed.values()) d.timer.cancel();
    this.ready.clear();
    this.unacked.clear();
    this.jobSlot.clear();
    this.pending.clear();
    this.delayed.clear();
    this.deliveries.clear();
    for (const w of this.waiters.splice(0)) {
      w.timer?.cancel();
      w.resolve(null);
    }
  }

  /** Adds an evaluation; one with a future WaitUntil is held until then. Idempotent per ID. */
  enqueue(e: Evaluation): void {
    if (!this.enabled) return;
    if (this.unacked.has(e.ID) || this.delayed.has(e.ID) || this.isQueued(e)) return;
    const waitUntil = e.WaitUntil ? Date.parse(e.WaitUntil) : NaN;
    if (!Number.isNaN(waitUntil) && waitUntil > this.clock.now()) {
      const timer = this.clock.setTimer(waitUntil - this.clock.now(), () => {
        this.delayed.delete(e.ID);
        this.enqueueReady(e);
      });
      this.delayed.set(e.ID, { eval: e, timer });
      return;
    }
    this.enqueueReady(e);
  }

  /**
   * Waits up to timeoutMs for an evaluation of one of `schedulers`; null on timeout, abort
   * or flush. The eval must be acked or nacked with the token before the nack timeout.
   */
  dequeue(schedulers: string[], timeoutMs: number, signal?: AbortSignal): Promise<Dequeued | null> {
    if (!this.enabled) return Promise.reject(new EvalBrokerError('BROKER_DISABLED', 'eval broker disabled'));
    const now = this.paused ? null : this.take(schedulers);
    if (now || timeoutMs <= 0) return Promise.resolve(now);
    return new Promise((resolve) => {
      const w: Waiter = { schedulers, resolve, timer: null };
      const finish = (d: Dequeued | null): void => {
        w.timer?.cancel();
        this.waiters = this.waiters.filter((x) => x !== w);
        signal?.removeEventListener('abort', onAbort);
        resolve(d);
      };
      const onAbort = (): void => finish(null);
      w.resolve = finish;
      w.timer = this.clock.setTimer(timeoutMs, () => finish(null));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(w);
    });
  }

  /** Completes an outstanding evaluation; frees its job for the next pending eval. */
  ack(evalId: string, token: string): void {
    const u = this.checkOutstanding(evalId, token);
    u.timer?.cancel();
    this.unacked.delete(evalId);
    this.deliveries.delete(evalId);
    this.releaseJob(u.eval);
  }

  /** Returns an outstanding evaluation for redelivery (after a delay), or to the failed queue. */
  nack(evalId: string, token: string): void {
    const u = this.checkOutstanding(evalId, token);
    u.timer?.cancel();
    this.unacked.delete(evalId);
    const n = this.deliveries.get(evalId) ?? 0;
    if (n >= this.deliveryLimit) {
      this.deliveries.delete(evalId);
      this.failedCount++;
      this.releaseJob(u.eval);
      this.config.onFailed?.(u.eval);
      return;
    }
    // As Nomad: the first nack waits the initial delay, later ones (deliveries-1) × the subsequent one.
    const delay = n <= 1 ? this.initialNackDelayMs : (n - 1) * this.subsequentNackDelayMs;
    // The job keeps its slot while the eval waits to be redelivered.
    const timer = this.clock.setTimer(delay, () => {
      this.delayed.delete(evalId);
      this.pushReady(u.eval);
    });
    this.delayed.set(evalId, { eval: u.eval, timer });
  }

  /** Restarts the nack timer of an outstanding eval (the worker is still busy with it). */
  outstandingReset(evalId: string, token: string): void {
    const u = this.checkOutstanding(evalId, token);
    u.timer?.cancel();
    u.timer = this.clock.setTimer(this.nackTimeoutMs, () => this.nackIfStill(evalId, token));
  }

  /**
   * Stops the nack timer of an outstanding eval while its plan waits in the plan queue (as
   * Nomad's PauseNackTimeout): a slow plan applier must not get the eval redelivered under a
   * worker that is still working on it. resumeNackTimeout restarts it in full.
   */
  pauseNackTimeout(evalId: string, token: string): void {
    const u = this.checkOutstanding(evalId, token);
    u.timer?.cancel();
    u.timer = null;
  }

  /** Restarts a paused (or running) nack timer with the full timeout. */
  resumeNackTimeout(evalId: string, token: string): void {
    this.outstandingReset(evalId, token);
  }

  /** The token of an outstanding evaluation, if it is outstanding. */
  outstanding(evalId: string): string | undefined {
    return this.unacked.get(evalId)?.token;
  }

  stats(): EvalBrokerStats {
    const byScheduler: Record<string, number> = {};
    let ready = 0;
    for (const [t, h] of this.ready) {
      byScheduler[t] = h.size;
      ready += h.size;
    }
    let pending = 0;
    for (const p of this.pending.values()) pending += p.length;
    return { ready, unacked: this.unacked.size, pending, delayed: this.delayed.size, failed: this.failedCount, byScheduler };
  }

  private isQueued(e: Evaluation): boolean {
    if (this.jobSlot.get(jobKeyOf(e)) === e.ID) return true;
    return (this.pending.get(jobKeyOf(e)) ?? []).some((p) => p.ID === e.ID);
  }

  private enqueueReady(e: Evaluation): void {
    const key = jobKeyOf(e);
    const holder = this.jobSlot.get(key);
    if (holder !== undefined && holder !== e.ID) {
      const list = this.pending.get(key) ?? [];
      list.push(e);
      this.pending.set(key, list);
      return;
    }
    this.jobSlot.set(key, e.ID);
    this.pushReady(e);
  }

  private pushReady(e: Evaluation): void {
    let h = this.ready.get(e.Type);
    if (!h) {
      h = new EvalHeap();
      this.ready.set(e.Type, h);
    }
    h.push(e);
    this.serveWaiters();
  }

  private releaseJob(e: Evaluation): void {
    const key = jobKeyOf(e);
    if (this.jobSlot.get(key) === e.ID) this.jobSlot.delete(key);
    const list = this.pending.get(key);
    if (!list || list.length === 0) return;
    this.pending.delete(key);
    // Newest wins: the latest eval carries the freshest intent; older ones are superseded.
    const sorted = [...list].sort((a, b) => b.ModifyIndex - a.ModifyIndex || b.CreateIndex - a.CreateIndex);
    const [next, ...rest] = sorted;
    if (rest.length > 0) this.config.onCancelable?.(rest);
    if (next) this.enqueueReady(next);
  }

  private take(schedulers: string[]): Dequeued | null {
    let best: EvalHeap | undefined;
    for (const s of schedulers) {
      const h = this.ready.get(s);
      const top = h?.peek();
      if (!h || !top) continue;
      const cur = best?.peek();
      if (!cur || top.Priority > cur.Priority || (top.Priority === cur.Priority && top.CreateIndex < cur.CreateIndex)) best = h;
    }
    const e = best?.pop();
    if (!e) return null;
    const token = randomUUID();
    this.deliveries.set(e.ID, (this.deliveries.get(e.ID) ?? 0) + 1);
    const timer = this.clock.setTimer(this.nackTimeoutMs, () => this.nackIfStill(e.ID, token));
    this.unacked.set(e.ID, { eval: e, token, timer });
    return { eval: e, token };
  }

  private nackIfStill(evalId: string, token: string): void {
    if (this.unacked.get(evalId)?.token === token) this.nack(evalId, token);
  }

  private serveWaiters(): void {
    if (this.paused) return;
    for (const w of [...this.waiters]) {
      const d = this.take(w.schedulers);
      if (d) w.resolve(d);
    }
  }

  private checkOutstanding(evalId: string, token: string): Unacked {
    const u = this.unacked.get(evalId);
    if (!u) throw new EvalBrokerError('EVAL_NOT_OUTSTANDING', `evaluation ${evalId} is not outstanding`);
    if (u.token !== token) throw new EvalBrokerError('TOKEN_MISMATCH', `token does not match for evaluation ${evalId}`);
    return u;
  }
}
