/**
 * Everything only the leader does, as one unit with one lifetime (Nomad's establishLeadership /
 * revokeLeadership): the eval broker and blocked evals, the plan applier, the scheduling workers,
 * node heartbeat timers, the periodic dispatcher, the deployment watcher, the node drainer, the
 * garbage-collection timer, and the reactions to applied entries that feed them.
 *
 * A server builds a fresh LeaderDuties each time it gains leadership, after it has applied the
 * whole log, and start() rebuilds it from the state (pending evals enqueued, blocked ones blocked
 * again, every live node given a fresh heartbeat TTL). stop() cancels every timer, stops the
 * workers and empties the broker; nothing of it runs on a follower.
 */
import { cpus } from 'node:os';
import type pino from 'pino';
import type { Evaluation, Job } from '../../structs/index.js';
import type { Clock, RandomSource, Timer } from '../../time/clock.js';
import { BlockedEvals } from '../broker/blocked-evals.js';
import { EvalBroker } from '../broker/eval-broker.js';
import { DeploymentWatcher } from '../deployment/deployment-watcher.js';
import { drainCompleteCommand } from '../drain/node-drain-update.js';
import { NodeDrainer } from '../drain/node-drainer.js';
import type { StreamEvent } from '../events/event.js';
import type { Command } from '../fsm/commands.js';
import { Heartbeater } from '../heartbeat/heartbeater.js';
import { VariableLockTimers } from './variable-lock-timers.js';
import { newEvaluation } from '../new-eval.js';
import { PeriodicDispatcher } from '../periodic/periodic-dispatcher.js';
import { PlanApplier } from '../plan/plan-applier.js';
import { ServerError } from '../server-error.js';
import type { ServerConfig } from '../server-config.js';
import type { StateStore } from '../state/state-store.js';
import { Worker } from '../worker/worker.js';
import type { FactoryLookup } from '../endpoints/endpoint-context.js';
import { reactToApply } from './leader-reactions.js';
import { LeaderEventLog } from './leader-event-log.js';

/** How many evaluations' last processing errors the leader remembers. */
const MAX_REMEMBERED_EVAL_ERRORS = 1_000;
/** The schedulers workers take evaluations for. */
export const SCHEDULERS = ['service', 'batch', 'system', 'sysbatch'];

/** What the duties need of their server. */
export interface LeaderDutiesDeps {
  config: ServerConfig;
  store: StateStore;
  clock: Clock;
  random: RandomSource;
  factoryFor: FactoryLookup;
  logger?: pino.Logger;
  /** The write path (NOT_LEADER once leadership is gone). */
  apply(cmd: Command): Promise<number>;
  /** Registers a job (periodic launches). */
  registerJob(job: Job): Promise<unknown>;
  /** Registers an earlier version of a job again (deployment auto-revert). */
  autoRevert(job: Job): Promise<void>;
  /** Marks a node down after its heartbeat timer expired. */
  markMissedHeartbeat(nodeId: string): Promise<void>;
  /** Collects old terminal evals of dead jobs (the GC timer). */
  collectGarbage(): Promise<number>;
}

/** See the file comment. */
export class LeaderDuties {
  readonly broker: EvalBroker;
  readonly blocked: BlockedEvals;
  readonly planApplier: PlanApplier;
  readonly heartbeats: Heartbeater;
  /** Migrates allocations off draining nodes. */
  readonly drainer: NodeDrainer;
  /** Launches periodic jobs' children. */
  readonly periodic: PeriodicDispatcher;
  /** Follows running deployments' health: continues, promotes, fails or completes them. */
  readonly deploymentWatcher: DeploymentWatcher;
  readonly workers: Worker[] = [];
  /** Expires variable locks whose TTL passed. */
  readonly variableLocks: VariableLockTimers;
  private gcTimer: Timer | null = null;
  private stopped = false;
  /** The cluster's events as agent log lines (see leader-event-log.ts). */
  private readonly eventLog: LeaderEventLog;
  /** The last error of evaluations that failed to process, for the StatusDescription when they reach the delivery limit. */
  private readonly evalErrors = new Map<string, string>();

  constructor(private readonly deps: LeaderDutiesDeps) {
    this.eventLog = new LeaderEventLog(deps.logger);
    const { config, store, clock } = deps;
    const nowNanos = (): number => clock.now() * 1_000_000;
    this.broker = new EvalBroker({
      clock,
      ...config.broker,
      onFailed: (e) => void this.failEval(e).catch((err) => this.logError(err, 'failing eval')),
      onCancelable: (evals) => void this.cancelEvals(evals).catch((err) => this.logError(err, 'canceling evals')),
    });
    this.blocked = new BlockedEvals({
      enqueue: (e) => this.broker.enqueue(e),
      onCancel: (e) => void this.cancelEvals([e]).catch((err) => this.logError(err, 'canceling evals')),
    });
    this.planApplier = new PlanApplier({
      state: store,
      commit: (cmd) => deps.apply(cmd),
      nowNanos,
      checkToken: (id, token) => this.broker.outstanding(id) === token,
    });
    this.variableLocks = new VariableLockTimers({
      clock,
      expire: async (namespace, path, lockId) => {
        await this.whenRunning(() => deps.apply({ Type: 'VariableLock', Op: 'release', Namespace: namespace, Path: path, LockID: lockId, Now: nowNanos() }));
      },
      onError: (err) => this.logError(err, 'expiring a variable lock'),
    });
    this.heartbeats = new Heartbeater({
      clock,
      random: deps.random,
      minTtlMs: config.heartbeat?.minTtlMs,
      maxHeartbeatsPerSecond: config.heartbeat?.maxHeartbeatsPerSecond,
      graceMs: config.heartbeat?.graceMs,
      onExpire: (id) => void this.whenRunning(() => deps.markMissedHeartbeat(id)).catch((err) => this.logError(err, 'marking node down')),
    });
    this.drainer = new NodeDrainer({
      state: store,
      clock,
      markForMigration: async (transitions, evals) => {
        await deps.apply({ Type: 'AllocUpdateDesiredTransition', Allocs: transitions, Evals: evals, Now: nowNanos() });
      },
      completeDrain: async (nodeId) => {
        await deps.apply(drainCompleteCommand(nodeId, clock.now()));
      },
      newEval: (job) => newEvaluation(job, 'node-drain', nowNanos()),
      onError: (err) => this.logError(err, 'node drain'),
    });
    this.periodic = new PeriodicDispatcher({
      clock,
      state: store,
      launch: (child) => deps.registerJob(child),
      onError: (err, what) => this.logError(err, what),
    });
    this.deploymentWatcher = new DeploymentWatcher({
      state: store,
      clock,
      updateStatus: async (update, evaluation) => {
        await deps.apply({ Type: 'DeploymentStatusUpdate', Update: update, Eval: evaluation, Now: nowNanos() });
      },
      promote: async (deploymentId, evaluation) => {
        await deps.apply({ Type: 'DeploymentPromote', DeploymentID: deploymentId, Groups: null, Eval: evaluation, Now: nowNanos() });
      },
      createEval: async (evaluation) => {
        await deps.apply({ Type: 'EvalUpdate', Evals: [evaluation], Now: nowNanos() });
      },
      revert: (job) => deps.autoRevert(job),
      newEval: (job, deploymentId) => newEvaluation(job, 'deployment-watcher', nowNanos(), { DeploymentID: deploymentId }),
      onError: (err) => this.logError(err, 'deployment watcher'),
    });
  }

  /** Rebuilds the duties from the state and starts them (the state must be caught up with the log). */
  start(): void {
    const { store, config } = this.deps;
    const began = performance.now();
    let pending = 0;
    let blocked = 0;
    let held = 0;
    // Restore the broker: evals pending at a crash or a failover are scheduled again, blocked ones wait again.
    for (const e of store.evals()) {
      if (e.Status === 'pending') {
        this.broker.enqueue(e);
        pending++;
      } else if (e.Status === 'blocked') {
        this.blocked.block(e);
        blocked++;
      }
    }
    // Nomad gives every live node the failover TTL on leadership instead of declaring it down:
    // its clients may still be looking for the new leader. Caravan gives at least the longest TTL
    // the old leader could have handed out (plus grace): at 10,000 nodes and 50 heartbeats a
    // second that is 400 s, more than Nomad's 5-minute default, and a client told to come back in
    // 400 s would otherwise be marked down for keeping its word.
    const live = store.nodes().filter((node) => node.Status !== 'down');
    const failoverMs = Math.max(config.heartbeat?.failoverTtlMs ?? 300_000, this.heartbeats.longestWaitMs(live.length));
    for (const node of live) {
      this.heartbeats.hold(node.ID, failoverMs);
      held++;
    }
    this.scheduleGc();
    this.variableLocks.start(store.variables('*').filter((v) => v.Lock));
    this.drainer.start();
    this.periodic.start();
    this.deploymentWatcher.start();
    const n = workerCount(config);
    for (let i = 0; i < n; i++) {
      const w = new Worker({
        broker: this.broker,
        state: store,
        clock: this.deps.clock,
        random: this.deps.random,
        schedulers: SCHEDULERS,
        schedulerFactoryFor: this.deps.factoryFor,
        submitPlan: (plan) => this.planApplier.submit(plan),
        upsertEvals: async (evals, by) => {
          // As Nomad's Eval.Update/Create/Reblock: only the worker holding the eval may write.
          if (this.broker.outstanding(by.evalId) !== by.token) {
            throw new ServerError('EVAL_TOKEN_MISMATCH', { evalId: by.evalId });
          }
          await this.deps.apply({ Type: 'EvalUpdate', Evals: evals, Now: this.nowNanos() });
        },
        ...(this.deps.config.maxPlacementsPerPlan !== undefined ? { maxPlacementsPerPlan: this.deps.config.maxPlacementsPerPlan } : {}),
        onError: (err, e) => {
          if (e) this.noteEvalError(e.ID, err);
          this.logError(err, e ? `processing eval ${e.ID}` : 'worker');
        },
      });
      this.workers.push(w);
      w.start();
    }
    // What a failover's new leader spends on taking office (a trace of scenario 5, docs/nodesim.md).
    this.deps.logger?.info({ ms: Math.round(performance.now() - began), pendingEvals: pending, blockedEvals: blocked, nodesHeld: held }, 'leader duties started');
  }

  /** The leader's reaction to an entry applied at `index` (see leader-reactions.ts). */
  react(cmd: Command, index: number, events: StreamEvent[]): void {
    if (this.stopped) return;
    this.eventLog.record(cmd, index, events);
    reactToApply(cmd, index, events, {
      broker: this.broker,
      blocked: this.blocked,
      drainer: this.drainer,
      deploymentWatcher: this.deploymentWatcher,
      periodic: this.periodic,
      deploymentOfAlloc: (id) => this.deps.store.allocById(id)?.DeploymentID ?? '',
    });
  }

  /** Cancels every timer, stops the workers and empties the broker; resolves once the workers stopped. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.gcTimer?.cancel();
    this.periodic.stop();
    this.heartbeats.stop();
    this.variableLocks.stop();
    this.drainer.stop();
    this.deploymentWatcher.stop();
    this.broker.setEnabled(false);
    this.blocked.setEnabled(false);
    this.planApplier.close();
    await Promise.all(this.workers.map((w) => w.stop()));
  }

  isStopped(): boolean {
    return this.stopped;
  }

  private scheduleGc(): void {
    const every = this.deps.config.gcIntervalMs ?? 300_000;
    if (every <= 0 || this.stopped) return;
    this.gcTimer = this.deps.clock.setTimer(every, () => {
      void this.whenRunning(() => this.deps.collectGarbage())
        .catch((err) => this.logError(err, 'garbage collection'))
        .finally(() => this.scheduleGc());
    });
  }

  /** A duty's write after a failed delivery limit: the eval fails, a delayed follow-up replaces it. */
  private async failEval(e: Evaluation): Promise<void> {
    const now = this.nowNanos();
    const delayMs = (this.deps.config.failedFollowUpDelayMs ?? 60_000) * (1 + this.deps.random());
    const followUp: Evaluation = {
      ...newEvaluation(
        { ID: e.JobID, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type as Job['Type'], JobModifyIndex: e.JobModifyIndex },
        'failed-follow-up',
        now,
      ),
      PreviousEval: e.ID,
      WaitUntil: new Date(this.deps.clock.now() + delayMs).toISOString(),
    };
    const reason = this.evalErrors.get(e.ID);
    this.evalErrors.delete(e.ID);
    const failed: Evaluation = {
      ...e,
      Status: 'failed',
      StatusDescription: `evaluation reached delivery limit (${this.broker.limit})${reason ? `: ${reason}` : ''}`,
      NextEval: followUp.ID,
    };
    await this.deps.apply({ Type: 'EvalUpdate', Evals: [failed, followUp], Now: now });
  }

  /** Remembers why an evaluation failed to process (the newest errors only: the map stays small). */
  private noteEvalError(evalId: string, err: unknown): void {
    this.evalErrors.delete(evalId);
    this.evalErrors.set(evalId, (err instanceof Error ? err.message : String(err)).slice(0, 500));
    if (this.evalErrors.size > MAX_REMEMBERED_EVAL_ERRORS) this.evalErrors.delete(this.evalErrors.keys().next().value!);
  }

  private async cancelEvals(evals: Evaluation[]): Promise<void> {
    if (evals.length === 0 || this.stopped) return;
    const canceled = evals.map((e) => ({ ...e, Status: 'canceled' as const, StatusDescription: 'evaluation superseded by a newer one of the same job' }));
    await this.deps.apply({ Type: 'EvalUpdate', Evals: canceled, Now: this.nowNanos() });
  }

  /** Runs a timer's work unless the duties stopped meanwhile. */
  private async whenRunning<T>(work: () => Promise<T>): Promise<T | undefined> {
    return this.stopped ? undefined : work();
  }

  private nowNanos(): number {
    return this.deps.clock.now() * 1_000_000;
  }

  private logError(err: unknown, what: string): void {
    if (this.stopped) return;
    this.deps.logger?.error({ err }, `server: ${what} failed`);
  }
}

/** How many scheduling workers a leader runs: the agent's num_schedulers, else one per CPU. */
export function workerCount(config: ServerConfig): number {
  return config.numWorkers ?? Math.max(1, cpus().length);
}
