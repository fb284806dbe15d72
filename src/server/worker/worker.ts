/**
 * A scheduling worker (Nomad's worker): loop dequeue → wait for the state to reach the eval's
 * ModifyIndex (bounded) → snapshot → run the eval type's scheduler with this worker as its
 * Planner → ack; nack on any error, with exponential backoff. Several run concurrently.
 */
import { randomUUID } from 'node:crypto';
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';
import type { Evaluation, Plan, PlanResult } from '../../structs/index.js';
import type { Planner, SchedulerFactory, SchedulerState } from '../../scheduler/interfaces.js';
import type { Clock, RandomSource } from '../../time/clock.js';
import type { EvalBroker } from '../broker/eval-broker.js';
import type { StateStore } from '../state/state-store.js';

/** Backoff after errors: base × 4^failures, up to the limit (ms). */
const BACKOFF_BASE_MS = 20;
const BACKOFF_LIMIT_MS = 5_000;
/** How long a worker waits for the state to catch up with an eval (ms). */
const SYNC_LIMIT_MS = 5_000;
/** How long one dequeue blocks before the loop checks for shutdown (ms). */
const DEQUEUE_TIMEOUT_MS = 500;

/** Worker failure modes; `code` says which. */
export class WorkerError extends CaravanError<'NO_SCHEDULER' | 'SYNC_TIMEOUT'> {
  constructor(code: 'NO_SCHEDULER' | 'SYNC_TIMEOUT', reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'WorkerError';
  }
}

/** The eval a worker is processing and the broker token that proves it still owns it. */
export interface EvalLease {
  evalId: string;
  token: string;
}

/** What a worker needs from the server. */
export interface WorkerDeps {
  broker: EvalBroker;
  state: StateStore;
  clock: Clock;
  random: RandomSource;
  schedulers: string[];
  schedulerFactoryFor: (type: string) => SchedulerFactory | undefined;
  submitPlan: (plan: Plan) => Promise<PlanResult>;
  /**
   * Persists evaluations (EvalUpdate command) on behalf of the outstanding eval `by`; resolves
   * once applied, rejects when `by` is no longer outstanding with that token (a stale worker).
   */
  upsertEvals: (evals: Evaluation[], by: EvalLease) => Promise<void>;
  /** The most new allocations one evaluation places (the scheduler's default when absent). */
  maxPlacementsPerPlan?: number;
  onError?: (err: unknown, evaluation: Evaluation | null) => void;
}

/** Nomad's worker status (WorkerStatus): the worker's own lifecycle. */
export type WorkerStatus = 'Starting' | 'Started' | 'Paused' | 'Stopping' | 'Stopped';
/** Nomad's worker workload status (SchedulerWorkerStatus): what the worker is doing now. */
export type WorkloadStatus = 'Starting' | 'WaitingToDequeue' | 'WaitingForRaft' | 'Scheduling' | 'Backoff' | 'Paused' | 'Stopped';

/** One worker as Nomad's agent reports it (GET /v1/agent/schedulers). */
export interface WorkerInfo {
  ID: string;
  EnabledSchedulers: string[];
  /** When the worker started (ms since the epoch); 0 before start(). */
  startedMs: number;
  Status: WorkerStatus;
  WorkloadStatus: WorkloadStatus;
}

/** One scheduling worker. start() runs the loop until stop(). */
export class Worker {
  /** Names the worker in the agent's scheduler report. */
  readonly id = randomUUID();
  private startedMs = 0;
  private workload: WorkloadStatus = 'Starting';
  private stopped = true;
  private paused = false;
  private resumeWaiters: (() => void)[] = [];
  private failures = 0;
  private loop: Promise<void> | null = null;
  private readonly abort = new AbortController();
  /** Evaluations processed (acked) by this worker. */
  processed = 0;

  constructor(private readonly deps: WorkerDeps) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.startedMs = this.deps.clock.now();
    this.loop = this.run();
  }

  /** Stops after the current evaluation; resolves when the loop has exited. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.setPaused(false);
    await this.loop;
  }

  /** What the worker is and does now, in Nomad's terms. */
  info(): WorkerInfo {
    const exited = this.stopped && this.workload === 'Stopped';
    const status: WorkerStatus = exited ? 'Stopped' : this.stopped ? (this.startedMs === 0 ? 'Starting' : 'Stopping') : this.paused ? 'Paused' : 'Started';
    return { ID: this.id, EnabledSchedulers: [...this.deps.schedulers], startedMs: this.startedMs, Status: status, WorkloadStatus: this.workload };
  }

  /** Pauses (or resumes) dequeuing; an evaluation in progress finishes. */
  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) for (const r of this.resumeWaiters.splice(0)) r();
  }

  private async run(): Promise<void> {
    try {
      await this.loopUntilStopped();
    } finally {
      this.workload = 'Stopped';
    }
  }

  private async loopUntilStopped(): Promise<void> {
    while (!this.stopped) {
      if (this.paused) {
        this.workload = 'Paused';
        await new Promise<void>((r) => this.resumeWaiters.push(r));
      }
      if (this.stopped) break;
      let d;
      try {
        this.workload = 'WaitingToDequeue';
        d = await this.deps.broker.dequeue(this.deps.schedulers, DEQUEUE_TIMEOUT_MS, this.abort.signal);
      } catch (err) {
        this.deps.onError?.(err, null);
        await this.backoff();
        continue;
      }
      if (!d) continue;
      // As Nomad: a successful dequeue ends a run of broker errors, whatever the eval's fate.
      this.failures = 0;
      if (this.stopped) {
        this.sendAck(d.eval.ID, d.token, false);
        break;
      }
      try {
        await this.process(d.eval, d.token);
        this.sendAck(d.eval.ID, d.token, true);
        this.processed++;
      } catch (err) {
        this.deps.onError?.(err, d.eval);
        this.sendAck(d.eval.ID, d.token, false);
        await this.backoff();
      }
    }
  }

  private async process(evaluation: Evaluation, token: string): Promise<void> {
    const { state } = this.deps;
    this.workload = 'WaitingForRaft';
    await this.waitForIndex(evaluation.ModifyIndex);
    this.workload = 'Scheduling';
    const factory = this.deps.schedulerFactoryFor(evaluation.Type);
    if (!factory) throw new WorkerError('NO_SCHEDULER', `no scheduler for evaluation type "${evaluation.Type}"`);
    const snap = state.snapshot();
    const planner = new WorkerPlanner(this, { evalId: evaluation.ID, token }, snap.index());
    const limit = this.deps.maxPlacementsPerPlan;
    const sched = factory(snap, planner, { now: this.deps.clock.now(), random: this.deps.random, ...(limit !== undefined ? { maxPlacementsPerPlan: limit } : {}) });
    await sched.process(evaluation);
  }

  /** Waits until the state reaches index, or fails after the sync limit. */
  async waitForIndex(index: number): Promise<void> {
    const reached = await this.deps.state.waitForIndex(index, SYNC_LIMIT_MS);
    if (reached < index) throw new WorkerError('SYNC_TIMEOUT', `state did not reach index ${index} (at ${reached})`);
  }

  /** Deps for the planner. */
  get depsForPlanner(): WorkerDeps {
    return this.deps;
  }

  private sendAck(evalId: string, token: string, ack: boolean): void {
    try {
      if (ack) this.deps.broker.ack(evalId, token);
      else this.deps.broker.nack(evalId, token);
    } catch (err) {
      // The eval may have timed out and been redelivered meanwhile; nothing to do.
      this.deps.onError?.(err, null);
    }
  }

  private async backoff(): Promise<void> {
    const ms = Math.min(BACKOFF_LIMIT_MS, BACKOFF_BASE_MS * 4 ** this.failures);
    if (ms < BACKOFF_LIMIT_MS) this.failures++;
    this.workload = 'Backoff';
    try {
      await this.deps.clock.sleep(ms, this.abort.signal);
    } catch {
      // aborted: shutting down
    }
  }
}

/** The Planner a scheduler sees while a worker processes one evaluation. */
class WorkerPlanner implements Planner {
  constructor(
    private readonly worker: Worker,
    private readonly lease: EvalLease,
    private readonly snapshotIndex: number,
  ) {}

  async submitPlan(plan: Plan): Promise<{ result: PlanResult; newState: SchedulerState | null }> {
    const deps = this.worker.depsForPlanner;
    const { evalId, token } = this.lease;
    plan.EvalToken = token;
    plan.SnapshotIndex = this.snapshotIndex;
    // The eval must not time out while its plan waits behind others (Nomad pauses the nack timer).
    deps.broker.pauseNackTimeout(evalId, token);
    let result: PlanResult;
    try {
      result = await deps.submitPlan(plan);
    } finally {
      resumeQuietly(deps, this.lease);
    }
    if (result.RefreshIndex <= 0) return { result, newState: null };
    await this.worker.waitForIndex(result.RefreshIndex);
    return { result, newState: deps.state.snapshot() };
  }

  async updateEval(e: Evaluation): Promise<void> {
    await this.worker.depsForPlanner.upsertEvals([{ ...e, SnapshotIndex: this.snapshotIndex }], this.lease);
  }

  async createEval(e: Evaluation): Promise<void> {
    await this.worker.depsForPlanner.upsertEvals([{ ...e, SnapshotIndex: this.snapshotIndex }], this.lease);
  }

  async reblockEval(e: Evaluation): Promise<void> {
    await this.worker.depsForPlanner.upsertEvals([{ ...e, Status: 'blocked', SnapshotIndex: this.snapshotIndex }], this.lease);
  }
}

/** Restarts the nack timer; the eval may have been lost meanwhile (flush), which is not this plan's error. */
function resumeQuietly(deps: WorkerDeps, lease: EvalLease): void {
  if (deps.broker.outstanding(lease.evalId) !== lease.token) return;
  deps.broker.resumeNackTimeout(lease.evalId, lease.token);
}
