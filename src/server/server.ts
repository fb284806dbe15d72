/**
 * The Caravan server: opens the log, rebuilds the state (latest snapshot + the log's tail),
 * and as the (single, embedded) leader runs the eval broker, blocked evals, plan applier,
 * scheduling workers and heartbeat timers. Every write goes through `apply()`: appended to the
 * durable log, then applied by the FSM in log order, and only then acknowledged.
 */
import type { ScalingEvent } from './state/job-scaling-events.js';
import type { JobSubmission } from './state/job-submissions.js';
import type { SchedulerConfiguration } from '../structs/scheduler-config.js';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Evaluation, Job, Node, NodeEligibility, NodeStatus } from '../structs/index.js';
import { admitAllocUpdates, admitHeartbeatStatus, admitNodeRegistration } from './client-report-admission.js';
import type { SchedulerFactory } from '../scheduler/interfaces.js';
import { systemClock, type Clock, type RandomSource } from '../time/clock.js';
import {
  ServerError,
  type AllocClientUpdate,
  type DeploymentAction,
  type DeregisterJobResult,
  type JobPlanResult,
  type JobSubmissionOptions,
  type NodeRegisterResult,
  type RegisterJobOptions,
  type RegisterJobResult,
  type ServerApi,
  type StateReader,
  type Table,
  type ScaleRequestEvent,
} from './server-api.js';
import type { LogBackend } from './log/log-backend.js';
import { SqliteLogBackend } from './log/sqlite-log-backend.js';
import { StateStore } from './state/state-store.js';
import { loadLatestSnapshot } from './snapshot/snapshot-decoder.js';
import { writeSnapshot, type SnapshotStats } from './snapshot/snapshot-writer.js';
import { Fsm, jobSpecChanged } from './fsm/fsm.js';
import type { Command } from './fsm/commands.js';
import { decodeCommand, encodeCommand } from './fsm/command-codec.js';
import { checkCommand } from './fsm/command-check.js';
import { EventBroker } from './events/event-broker.js';
import type { StreamEvent } from './events/event.js';
import { EvalBroker } from './broker/eval-broker.js';
import { BlockedEvals } from './broker/blocked-evals.js';
import { PlanApplier } from './plan/plan-applier.js';
import { Worker } from './worker/worker.js';
import { Heartbeater } from './heartbeat/heartbeater.js';
import { newEvaluation } from './new-eval.js';
import { nodeUpdateEvals } from './node-evals.js';
import { dryRunPlan } from './plan-dry-run.js';
import { admitJob } from './job-admission.js';
import { findGarbage } from './gc/garbage.js';
import { NodeDrainer } from './drain/node-drainer.js';
import { drainCompleteCommand, drainUpdateCommand, parseDrainRequest } from './drain/node-drain-update.js';
import type { Timer } from '../time/clock.js';
import { PeriodicDispatcher } from './periodic/periodic-dispatcher.js';
import { DeploymentWatcher } from './deployment/deployment-watcher.js';
import { reactToApply } from './leader-reactions.js';
import { planDeploymentAction } from './deployment/deployment-actions.js';
import type { ServerConfig } from './server-config.js';

export type { ServerConfig } from './server-config.js';

interface PendingApply {
  /** The command as written to the log (its payload); the FSM applies this, as replay would. */
  payload: string;
  resolve: (index: number) => void;
  reject: (err: Error) => void;
}

type FactoryLookup = (type: string) => SchedulerFactory | undefined;

/** The schedulers workers take evaluations for. */
const SCHEDULERS = ['service', 'batch', 'system', 'sysbatch'];

/** A Caravan server (see the file comment). Create with Server.open(). */
export class Server implements ServerApi {
  readonly state: StateReader;
  readonly store: StateStore;
  readonly events: EventBroker;
  readonly eventBroker: EventBroker;
  readonly broker: EvalBroker;
  readonly blocked: BlockedEvals;
  readonly planApplier: PlanApplier;
  readonly heartbeats: Heartbeater;
  /** Migrates allocations off draining nodes (a leader duty). */
  readonly drainer: NodeDrainer;
  readonly workers: Worker[] = [];
  private readonly fsm: Fsm;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  private readonly pending = new Map<number, PendingApply>();
  private appliedIndex: number;
  private lastSnapshotIndex: number;
  private closed = false;
  private advertised: string;
  /** The snapshot being written, if any; close() waits for it. */
  private snapshotTask: Promise<SnapshotStats> | null = null;
  private gcTimer: Timer | null = null;
  /** Launches periodic jobs' children (a leader duty). */
  readonly periodic: PeriodicDispatcher;
  /** Follows running deployments' health: continues, promotes, fails or completes them (a leader duty). */
  readonly deploymentWatcher: DeploymentWatcher;

  private constructor(
    readonly config: ServerConfig,
    private readonly log: LogBackend,
    store: StateStore,
    private readonly factoryFor: FactoryLookup,
    snapshotIndex: number,
  ) {
    this.advertised = config.advertiseAddr ?? '';
    this.clock = config.clock ?? systemClock;
    this.random = config.random ?? Math.random;
    this.store = store;
    this.state = store;
    this.fsm = new Fsm(store);
    this.appliedIndex = store.latestIndex();
    this.lastSnapshotIndex = snapshotIndex;
    this.events = new EventBroker(config.eventBufferSize ?? 4096);
    this.eventBroker = this.events;
    this.broker = new EvalBroker({
      clock: this.clock,
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
      commit: (cmd) => this.apply(cmd),
      nowNanos: () => this.nowNanos(),
      checkToken: (id, token) => this.broker.outstanding(id) === token,
    });
    this.heartbeats = new Heartbeater({
      clock: this.clock,
      random: this.random,
      ...config.heartbeat,
      onExpire: (id) => void this.nodeMissedHeartbeat(id).catch((err) => this.logError(err, 'marking node down')),
    });
    this.drainer = new NodeDrainer({
      state: store,
      clock: this.clock,
      markForMigration: async (transitions, evals) => {
        await this.apply({ Type: 'AllocUpdateDesiredTransition', Allocs: transitions, Evals: evals, Now: this.nowNanos() });
      },
      completeDrain: async (nodeId) => {
        await this.apply(drainCompleteCommand(nodeId, this.clock.now()));
      },
      newEval: (job) => newEvaluation(job, 'node-drain', this.nowNanos()),
      onError: (err) => this.logError(err, 'node drain'),
    });
    this.periodic = new PeriodicDispatcher({
      clock: this.clock,
      state: store,
      launch: (child) => this.registerJob(child),
      onError: (err, what) => this.logError(err, what),
    });
    this.deploymentWatcher = new DeploymentWatcher({
      state: store,
      clock: this.clock,
      updateStatus: async (update, evaluation) => {
        await this.apply({ Type: 'DeploymentStatusUpdate', Update: update, Eval: evaluation, Now: this.nowNanos() });
      },
      promote: async (deploymentId, evaluation) => {
        await this.apply({ Type: 'DeploymentPromote', DeploymentID: deploymentId, Groups: null, Eval: evaluation, Now: this.nowNanos() });
      },
      createEval: async (evaluation) => {
        await this.apply({ Type: 'EvalUpdate', Evals: [evaluation], Now: this.nowNanos() });
      },
      revert: async (job) => {
        await this.autoRevert(job);
      },
      newEval: (job, deploymentId) => newEvaluation(job, 'deployment-watcher', this.nowNanos(), { DeploymentID: deploymentId }),
      onError: (err) => this.logError(err, 'deployment watcher'),
    });
  }

  /** Opens the server in config.dataDir: restores state and starts the leader's duties. */
  static async open(config: ServerConfig): Promise<Server> {
    const log = config.logBackend ?? SqliteLogBackend.open(join(config.dataDir, 'server'));
    const store = new StateStore(config.clock);
    const fsm = new Fsm(store);
    const snap = await loadLatestSnapshot(log);
    if (snap) store.restore(snap.state);
    for (const entry of await log.read((snap?.index ?? 0) + 1)) {
      // A bad entry fails the same way it failed live (and changed nothing then): skip it.
      const applied = applyEntry(fsm, entry.payload, entry.index);
      if (applied instanceof Error) config.logger?.error({ err: applied, index: entry.index }, 'server: skipping log entry that failed to apply');
    }
    const factoryFor = config.schedulerFactory ?? (await loadSchedulerLookup());
    const server = new Server(config, log, store, factoryFor, snap?.index ?? 0);
    server.establishLeadership();
    return server;
  }

  // ---- leadership ----

  private establishLeadership(): void {
    const n = this.config.numWorkers ?? Math.max(1, cpus().length);
    // Restore the broker: evals pending at a crash are scheduled again, blocked ones wait again.
    for (const e of this.store.evals()) {
      if (e.Status === 'pending') this.broker.enqueue(e);
      else if (e.Status === 'blocked') this.blocked.block(e);
    }
    // Nomad gives every live node a fresh TTL on leadership instead of declaring it down.
    for (const node of this.store.nodes()) {
      if (node.Status !== 'down') this.heartbeats.reset(node.ID);
    }
    this.scheduleGc();
    this.drainer.start();
    this.periodic.start();
    this.deploymentWatcher.start();
    for (let i = 0; i < n; i++) {
      const w = new Worker({
        broker: this.broker,
        state: this.store,
        clock: this.clock,
        random: this.random,
        schedulers: SCHEDULERS,
        schedulerFactoryFor: this.factoryFor,
        submitPlan: (plan) => this.planApplier.submit(plan),
        upsertEvals: async (evals, by) => {
          // As Nomad's Eval.Update/Create/Reblock: only the worker holding the eval may write.
          if (this.broker.outstanding(by.evalId) !== by.token) {
            throw new ServerError('EVAL_TOKEN_MISMATCH', { evalId: by.evalId });
          }
          await this.apply({ Type: 'EvalUpdate', Evals: evals, Now: this.nowNanos() });
        },
        onError: (err, e) => this.logError(err, e ? `processing eval ${e.ID}` : 'worker'),
      });
      this.workers.push(w);
      w.start();
    }
  }

  private scheduleGc(): void {
    const every = this.config.gcIntervalMs ?? 300_000;
    if (every <= 0 || this.closed) return;
    this.gcTimer = this.clock.setTimer(every, () => {
      void this.collectGarbage()
        .catch((err) => this.logError(err, 'garbage collection'))
        .finally(() => this.scheduleGc());
    });
  }

  /** Removes old terminal evals (and their terminal allocs) of dead jobs; returns how many evals. */
  async collectGarbage(): Promise<number> {
    const threshold = (this.config.gcThresholdMs ?? 3_600_000) * 1_000_000;
    const g = findGarbage(this.store, this.nowNanos(), threshold);
    if (g.evalIds.length === 0) return 0;
    await this.apply({ Type: 'EvalDelete', EvalIDs: g.evalIds, AllocIDs: g.allocIds });
    return g.evalIds.length;
  }

  jobSubmission(namespace: string, jobId: string, version: number): JobSubmission | undefined {
    return this.store.submissions.get(namespace, jobId, version);
  }

  schedulerConfig(): SchedulerConfiguration {
    return this.store.schedulerConfig();
  }

  async setSchedulerConfig(config: Omit<SchedulerConfiguration, 'CreateIndex' | 'ModifyIndex'>, cas?: number): Promise<{ updated: boolean; index: number }> {
    if (cas !== undefined && this.store.schedulerConfig().ModifyIndex !== cas) return { updated: false, index: this.store.latestIndex() };
    const index = await this.apply({ Type: 'SchedulerConfigSet', Config: config, Now: this.nowNanos() });
    return { updated: true, index };
  }

  async forceGarbageCollection(): Promise<{ evals: number; jobs: number }> {
    const g = findGarbage(this.store, this.nowNanos(), 0);
    if (g.evalIds.length > 0) await this.apply({ Type: 'EvalDelete', EvalIDs: g.evalIds, AllocIDs: g.allocIds });
    // A dead job goes once nothing of it is left; periodic and parameterized parents only when stopped.
    const dead = this.store
      .jobs('*')
      .filter((j) => j.Status === 'dead' && (j.Stop || !(j.Periodic?.Enabled || j.ParameterizedJob)))
      .filter((j) => this.store.evalsByJob(j.Namespace, j.ID).length === 0 && this.store.allocsByJob(j.Namespace, j.ID).length === 0);
    for (const j of dead) await this.apply({ Type: 'JobDeregister', Namespace: j.Namespace, JobID: j.ID, Purge: true, Eval: null, Now: this.nowNanos() });
    return { evals: g.evalIds.length, jobs: dead.length };
  }

  async reconcileJobSummaries(): Promise<{ index: number }> {
    return { index: await this.apply({ Type: 'JobSummaryReconcile', Now: this.nowNanos() }) };
  }

  /** Stops the workers and timers and closes the log. Acknowledged writes are already durable. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.gcTimer?.cancel();
    this.periodic.stop();
    this.heartbeats.stop();
    this.drainer.stop();
    this.deploymentWatcher.stop();
    this.broker.setEnabled(false);
    this.blocked.setEnabled(false);
    this.planApplier.close();
    await Promise.all(this.workers.map((w) => w.stop()));
    // An unfinished snapshot is aborted at its next chunk; the previous one stays the latest.
    await this.snapshotTask?.catch(() => undefined);
    this.events.close();
    await this.log.close();
  }

  isLeader(): boolean {
    return true;
  }

  /**
   * The address clients and other agents reach this server at: its agent's HTTP address (Caravan
   * servers have no separate RPC port), "" until the agent listens and calls advertise.
   */
  leaderAddress(): string {
    return this.advertised;
  }

  /** Sets the address this server answers as leader and peer (the agent's real HTTP "host:port"). */
  advertise(addr: string): void {
    this.advertised = addr;
  }

  peers(): string[] {
    return [this.leaderAddress()];
  }

  waitForChange(tables: Table[], afterIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    return this.store.waitForChange(tables, afterIndex, timeoutMs, signal);
  }

  // ---- the write path ----

  /**
   * Appends a command to the log and applies it; resolves with its index once durable and
   * applied. Commands are applied strictly in log order whatever order appends resolve in.
   */
  apply(cmd: Command): Promise<number> {
    if (this.closed) return Promise.reject(new ServerError('SERVER_CLOSED', {}));
    let payload: string;
    try {
      checkCommand(cmd);
      payload = encodeCommand(cmd);
    } catch (err) {
      return Promise.reject(new ServerError('COMMAND_INVALID', { field: `${String(cmd?.Type)} command`, reason: (err as Error).message }, { cause: err }));
    }
    return new Promise<number>((resolve, reject) => {
      this.log.append([{ type: cmd.Type, payload }]).then(
        ([index]) => {
          this.pending.set(index!, { payload, resolve, reject });
          this.applyReady();
        },
        (err: unknown) => reject(new ServerError('LOG_WRITE_FAILED', { reason: (err as Error).message }, { cause: err })),
      );
    });
  }

  private applyReady(): void {
    for (;;) {
      const next = this.pending.get(this.appliedIndex + 1);
      if (!next) break;
      const index = this.appliedIndex + 1;
      this.pending.delete(index);
      // The entry is durable whatever happens: it counts as applied (a failed apply changed
      // nothing, and replay skips it the same way), so later entries are not held up.
      this.appliedIndex = index;
      const applied = applyEntry(this.fsm, next.payload, index);
      if (applied instanceof Error) {
        this.config.logger?.error({ err: applied, index }, 'server: log entry failed to apply');
        next.reject(new ServerError('APPLY_FAILED', { index, reason: applied.message }, { cause: applied }));
        continue;
      }
      this.events.publish(index, applied.events);
      try {
        this.afterApply(applied.cmd, index, applied.events);
      } catch (err) {
        this.logError(err, `leader reaction to entry ${index}`);
      }
      next.resolve(index);
    }
    this.maybeSnapshot();
  }

  /** Leader reactions to an applied command (see leader-reactions.ts). */
  private afterApply(cmd: Command, index: number, events: StreamEvent[]): void {
    if (this.closed) return;
    reactToApply(cmd, index, events, {
      broker: this.broker,
      blocked: this.blocked,
      drainer: this.drainer,
      deploymentWatcher: this.deploymentWatcher,
      periodic: this.periodic,
      deploymentOfAlloc: (id) => this.store.allocById(id)?.DeploymentID ?? '',
    });
  }

  private maybeSnapshot(): void {
    const threshold = this.config.snapshotThreshold ?? 8192;
    if (this.snapshotTask || this.closed || this.appliedIndex - this.lastSnapshotIndex < threshold) return;
    void this.startSnapshot().catch((err: unknown) => this.logError(err, 'snapshot'));
  }

  /**
   * Captures the state at the applied index and writes it in chunks, yielding between them;
   * compacts the log up to that index only once the snapshot is committed.
   */
  private startSnapshot(): Promise<SnapshotStats> {
    const task = (async () => {
      let stats: SnapshotStats;
      try {
        stats = await writeSnapshot(this.log, this.store, {
          rowsPerChunk: this.config.snapshotRowsPerChunk,
          shouldStop: () => this.closed,
        });
        await this.log.compact(stats.index);
      } catch (err) {
        // A failed attempt waits another threshold of entries instead of retrying at once.
        this.lastSnapshotIndex = Math.max(this.lastSnapshotIndex, this.appliedIndex);
        throw err;
      }
      this.lastSnapshotIndex = Math.max(this.lastSnapshotIndex, stats.index);
      this.config.logger?.info({ ...stats }, 'server: snapshot committed');
      this.config.onSnapshot?.(stats);
      return stats;
    })();
    const tracked = task.finally(() => {
      if (this.snapshotTask !== tracked) return;
      this.snapshotTask = null;
      // Entries applied while this one was written may already be another threshold's worth.
      this.maybeSnapshot();
    });
    this.snapshotTask = tracked;
    return tracked;
  }

  /** Writes a snapshot of the current state now (tests, shutdown tooling); resolves with its index. */
  async snapshotNow(): Promise<number> {
    // One at a time: wait out a snapshot in progress, then take one at the current index.
    while (this.snapshotTask) await this.snapshotTask.catch(() => undefined);
    if (this.closed) throw new ServerError('SERVER_CLOSED', {});
    return (await this.startSnapshot()).index;
  }

  // ---- jobs ----

  async registerJob(input: unknown, opts: RegisterJobOptions = {}): Promise<RegisterJobResult> {
    if (this.store.schedulerConfig().RejectJobRegistration) throw new ServerError('JOB_REGISTRATION_REJECTED', {});
    const job = admitJob(input, { region: this.config.region ?? 'global', namespace: opts.namespace, pathJobId: opts.pathJobId });
    const existing = this.store.jobById(job.Namespace, job.ID);
    if (opts.enforceIndex) {
      const want = opts.jobModifyIndex ?? 0;
      if (want === 0 && existing) {
        throw new ServerError('JOB_EXISTS', {});
      }
      if (want !== 0 && (!existing || existing.JobModifyIndex !== want)) {
        throw new ServerError('JOB_MODIFY_INDEX_CONFLICT', { expected: want, actual: existing?.JobModifyIndex ?? 0 });
      }
    }
    if (opts.preserveCounts && existing) {
      for (const tg of job.TaskGroups) {
        const prev = existing.TaskGroups.find((g) => g.Name === tg.Name);
        if (prev) tg.Count = prev.Count;
      }
    }
    const now = this.nowNanos();
    const needsEval = !job.Periodic?.Enabled && !job.ParameterizedJob;
    const evaluation = needsEval ? newEvaluation(job, 'job-register', now) : null;
    const index = await this.apply({
      Type: 'JobRegister',
      Job: job,
      Eval: evaluation,
      Now: now,
      ...(opts.submission ? { Submission: opts.submission } : {}),
      ...(opts.scalingEvent ? { ScalingEvent: opts.scalingEvent } : {}),
    });
    const stored = this.store.jobById(job.Namespace, job.ID);
    return {
      evalId: evaluation?.ID ?? '',
      evalCreateIndex: evaluation ? index : 0,
      jobModifyIndex: stored?.JobModifyIndex ?? index,
      index,
      warnings: '',
    };
  }

  async deregisterJob(namespace: string, jobId: string, purge: boolean): Promise<DeregisterJobResult> {
    const job = this.store.jobById(namespace, jobId);
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    const now = this.nowNanos();
    const needsEval = !job.Periodic?.Enabled && !job.ParameterizedJob;
    const evaluation = needsEval ? newEvaluation(job, 'job-deregister', now) : null;
    const index = await this.apply({ Type: 'JobDeregister', Namespace: namespace, JobID: jobId, Purge: purge, Eval: evaluation, Now: now });
    return {
      evalId: evaluation?.ID ?? '',
      evalCreateIndex: evaluation ? index : 0,
      jobModifyIndex: this.store.jobById(namespace, jobId)?.JobModifyIndex ?? index,
      index,
    };
  }

  async evaluateJob(namespace: string, jobId: string): Promise<{ evalId: string; index: number }> {
    const job = this.store.jobById(namespace, jobId);
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (job.Periodic?.Enabled || job.ParameterizedJob) {
      throw new ServerError('JOB_NOT_EVALUABLE', { job: jobId });
    }
    const e = newEvaluation(job, 'job-register', this.nowNanos());
    const index = await this.apply({ Type: 'EvalUpdate', Evals: [e], Now: this.nowNanos() });
    return { evalId: e.ID, index };
  }

  async planJob(input: unknown, opts: JobSubmissionOptions = {}): Promise<JobPlanResult> {
    const job = admitJob(input, { region: this.config.region ?? 'global', namespace: opts.namespace, pathJobId: opts.pathJobId });
    const snapshot = this.store.snapshot();
    const existing = snapshot.jobById(job.Namespace, job.ID);
    const changed = !existing || jobSpecChanged(existing, job);
    const index = snapshot.index();
    const candidate: Job = {
      ...job,
      CreateIndex: existing?.CreateIndex ?? index + 1,
      ModifyIndex: index + 1,
      JobModifyIndex: changed ? index + 1 : (existing?.JobModifyIndex ?? index + 1),
      Version: !existing ? 0 : changed ? existing.Version + 1 : existing.Version,
    };
    const factory = this.factoryFor(job.Type);
    if (!factory) throw new ServerError('NO_SCHEDULER', { reason: `no scheduler for job type "${job.Type}"` });
    const evaluation = newEvaluation(candidate, 'job-register', this.nowNanos(), { AnnotatePlan: true });
    return dryRunPlan({
      snapshot,
      candidate,
      existing,
      specChanged: changed,
      evaluation,
      factory,
      now: this.clock.now(),
      random: this.random,
    });
  }

  async stopAlloc(allocId: string): Promise<{ evalId: string; index: number }> {
    const alloc = this.store.allocById(allocId);
    if (!alloc) throw new ServerError('ALLOC_NOT_FOUND', { alloc: allocId });
    const job = this.store.jobById(alloc.Namespace, alloc.JobID) ?? alloc.Job;
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: alloc.JobID });
    const now = this.nowNanos();
    const e = newEvaluation(job, 'alloc-stop', now);
    const index = await this.apply({
      Type: 'AllocUpdateDesiredTransition',
      Allocs: { [allocId]: { Migrate: true } },
      Evals: [e],
      Now: now,
    });
    return { evalId: e.ID, index };
  }

  // ---- nodes ----

  async registerNode(raw: unknown): Promise<NodeRegisterResult> {
    const input = admitNodeRegistration(raw);
    const prev = this.store.nodeById(input.ID);
    // A registered node is re-registered only by the holder of its SecretID.
    if (prev && prev.SecretID && prev.SecretID !== input.SecretID) throw new ServerError('NODE_SECRET_MISMATCH', {});
    const node: Node = {
      ...input,
      Status: input.Status || 'ready',
      SchedulingEligibility: input.SchedulingEligibility || 'eligible',
      NodePool: input.NodePool || 'default',
      DrainStrategy: input.DrainStrategy ?? null,
    };
    const now = this.nowNanos();
    const transitioned = !prev || prev.Status !== node.Status;
    const evals = node.Status === 'ready' && transitioned ? nodeUpdateEvals(this.store, node.ID, this.store.latestIndex() + 1, now) : [];
    const index = await this.apply({ Type: 'NodeRegister', Node: node, Evals: evals, Now: now });
    const ttl = node.Status === 'down' ? 0 : this.heartbeats.reset(node.ID);
    return { heartbeatTtl: ttl * 1_000_000, index };
  }

  async heartbeatNode(nodeId: string, rawStatus: unknown, secretId: string): Promise<NodeRegisterResult> {
    const status = admitHeartbeatStatus(rawStatus);
    const node = this.store.nodeById(nodeId);
    if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    this.authenticateNode(node, secretId);
    let index = node.ModifyIndex;
    if (status && status !== node.Status) index = await this.setNodeStatus(nodeId, status, `Node heartbeat: status ${status}`);
    const ttl = status === 'down' ? 0 : this.heartbeats.reset(nodeId);
    if (status === 'down') this.heartbeats.clear(nodeId);
    return { heartbeatTtl: ttl * 1_000_000, index };
  }

  async updateNodeEligibility(nodeId: string, eligibility: NodeEligibility): Promise<{ index: number }> {
    const node = this.store.nodeById(nodeId);
    if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    if (eligibility !== 'eligible' && eligibility !== 'ineligible') {
      throw new ServerError('NODE_ELIGIBILITY_INVALID', { eligibility: String(eligibility) });
    }
    const index = await this.apply({ Type: 'NodeUpdateEligibility', NodeID: nodeId, Eligibility: eligibility, Evals: [], Now: this.nowNanos() });
    return { index };
  }

  /** Sets, replaces or cancels a node's drain (PUT /v1/node/:id/drain); the drainer does the rest. */
  async updateNodeDrain(nodeId: string, req: unknown): Promise<{ index: number; evalIds: string[] }> {
    const node = this.store.nodeById(nodeId);
    if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    const parsed = parseDrainRequest(req);
    // A node made eligible again is worth scheduling on: evaluate what could use it.
    const eligibleAgain = !parsed.DrainSpec && parsed.MarkEligible && node.SchedulingEligibility !== 'eligible';
    const evals = eligibleAgain ? nodeUpdateEvals(this.store, nodeId, this.store.latestIndex() + 1, this.nowNanos()) : [];
    const index = await this.apply(drainUpdateCommand(node, parsed, this.clock.now(), evals));
    return { index, evalIds: evals.map((e) => e.ID) };
  }

  /**
   * Refuses a client call for `node` that does not carry the node's SecretID (as Nomad's clients
   * authenticate their Node.* RPCs with it): 403 "Permission denied".
   */
  private authenticateNode(node: Node, secretId: string): void {
    if (node.SecretID !== secretId) throw new ServerError('NODE_SECRET_MISMATCH', {});
  }

  /** Marks a node down after a missed heartbeat; its allocations are handled by node-update evals. */
  private async nodeMissedHeartbeat(nodeId: string): Promise<void> {
    const node = this.store.nodeById(nodeId);
    if (!node || node.Status === 'down' || this.closed) return;
    await this.setNodeStatus(nodeId, 'down', 'Node heartbeat missed');
  }

  private async setNodeStatus(nodeId: string, status: NodeStatus, message: string): Promise<number> {
    const now = this.nowNanos();
    const evals = status === 'down' || status === 'ready' ? nodeUpdateEvals(this.store, nodeId, this.store.latestIndex() + 1, now) : [];
    return this.apply({
      Type: 'NodeUpdateStatus',
      NodeID: nodeId,
      Status: status,
      Event: {
        Message: message,
        Subsystem: 'Cluster',
        Details: null,
        Timestamp: new Date(this.clock.now()).toISOString(),
        CreateIndex: 0,
      },
      Evals: evals,
      Now: now,
    });
  }

  // ---- allocations ----

  async updateAllocsFromClient(raw: unknown, secretId: string): Promise<{ index: number }> {
    const updates = admitAllocUpdates(raw);
    const known: AllocClientUpdate[] = [];
    const failedJobs = new Map<string, Evaluation>();
    const now = this.nowNanos();
    for (const u of updates) {
      const prev = this.store.allocById(u.ID);
      if (!prev) continue;
      // Only the client of the allocation's node (holding its SecretID) reports on it.
      const node = this.store.nodeById(prev.NodeID);
      if (!node) continue;
      this.authenticateNode(node, secretId);
      known.push({ ...u, TaskStates: u.TaskStates ?? prev.TaskStates ?? {} });
      if (u.ClientStatus === 'failed' && prev.ClientStatus !== 'failed' && prev.DesiredStatus === 'run') {
        const job = this.store.jobById(prev.Namespace, prev.JobID);
        const key = `${prev.Namespace}\u0000${prev.JobID}`;
        if (job && !job.Stop && !failedJobs.has(key)) failedJobs.set(key, newEvaluation(job, 'alloc-failure', now));
      }
    }
    if (known.length === 0) return { index: this.store.latestIndex() };
    const index = await this.apply({ Type: 'AllocClientUpdate', Allocs: known, Evals: [...failedJobs.values()], Now: now });
    return { index };
  }

  // ---- deployments ----

  /** Promotes, fails, pauses/resumes a deployment or sets its allocations' health. */
  async deploymentAction(deploymentId: string, action: DeploymentAction): Promise<{ evalId: string; index: number }> {
    const now = this.nowNanos();
    const plan = planDeploymentAction(this.store, deploymentId, action, now, (job, id) =>
      newEvaluation(job, 'deployment-watcher', now, { DeploymentID: id }),
    );
    const index = await this.apply(plan.command);
    if (plan.revertTo) await this.autoRevert(plan.revertTo);
    return { evalId: plan.evaluation?.ID ?? '', index };
  }

  async revertJob(namespace: string, jobId: string, version: number, enforcePriorVersion?: number): Promise<RegisterJobResult> {
    const current = this.store.jobById(namespace, jobId);
    if (!current) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (enforcePriorVersion !== undefined && current.Version !== enforcePriorVersion) {
      throw new ServerError('JOB_ACTION_INVALID', { reason: `current job has version ${current.Version}; enforcing version ${enforcePriorVersion}` });
    }
    if (current.Version === version) throw new ServerError('JOB_ACTION_INVALID', { reason: "can't revert to current version" });
    const target = this.store.jobVersions(namespace, jobId).find((v) => v.Version === version);
    if (!target) throw new ServerError('JOB_VERSION_NOT_FOUND', { job: jobId, namespace, version });
    return this.registerJob({ ...target, Stable: false, Stop: false });
  }

  async setJobStability(namespace: string, jobId: string, version: number, stable: boolean): Promise<{ index: number }> {
    if (!this.store.jobById(namespace, jobId)) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (!this.store.jobVersions(namespace, jobId).some((v) => v.Version === version)) throw new ServerError('JOB_VERSION_NOT_FOUND', { job: jobId, namespace, version });
    const index = await this.apply({ Type: 'JobStability', Namespace: namespace, JobID: jobId, Version: version, Stable: stable, Now: this.nowNanos() });
    return { index };
  }

  async scaleJobGroup(namespace: string, jobId: string, group: string, count: number | null, event: ScaleRequestEvent = { Message: '', Error: false, Meta: null }): Promise<RegisterJobResult> {
    const current = this.store.jobById(namespace, jobId);
    if (!current) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    const tg = current.TaskGroups.find((g) => g.Name === group);
    if (!tg) throw new ServerError('JOB_ACTION_INVALID', { reason: `task group "${group}" specified for scaling does not exist in job` });
    const now = this.nowNanos();
    const ev: ScalingEvent = { Time: now, Count: count, PreviousCount: tg.Count, Message: event.Message, Error: event.Error, Meta: event.Meta, EvalID: null, CreateIndex: 0 };
    if (count === null) {
      const index = await this.apply({ Type: 'ScalingEventRecord', Namespace: namespace, JobID: jobId, Group: group, Event: ev, Now: now });
      return { evalId: '', evalCreateIndex: 0, jobModifyIndex: current.JobModifyIndex, index, warnings: '' };
    }
    if (current.Stop) throw new ServerError('JOB_ACTION_INVALID', { reason: `job "${jobId}" is stopped: cannot scale` });
    if (current.Type === 'system' || current.Type === 'sysbatch') throw new ServerError('JOB_ACTION_INVALID', { reason: `cannot scale jobs of type "${current.Type}"` });
    const policy = (tg as { Scaling?: { Min?: number; Max?: number } | null }).Scaling;
    if (policy && typeof policy.Min === 'number' && count < policy.Min) throw new ServerError('JOB_ACTION_INVALID', { reason: `group count was less than scaling policy minimum: ${count} < ${policy.Min}` });
    if (policy && typeof policy.Max === 'number' && count > policy.Max) throw new ServerError('JOB_ACTION_INVALID', { reason: `group count was greater than scaling policy maximum: ${count} > ${policy.Max}` });
    const job: Job = { ...current, TaskGroups: current.TaskGroups.map((g) => (g.Name === group ? { ...g, Count: count } : g)) };
    return this.registerJob(job, { scalingEvent: { Group: group, Event: ev } });
  }

  scalingEvents(namespace: string, jobId: string, group: string): ScalingEvent[] {
    return this.store.scalingEvents.events(namespace, jobId, group);
  }

  /** Registers an earlier version of a job again as its newest version (auto-revert). */
  private async autoRevert(version: Job): Promise<void> {
    const current = this.store.jobById(version.Namespace, version.ID);
    if (!current || current.Stop) return;
    await this.registerJob({ ...version, Stable: false, Stop: false });
  }

  // ---- broker callbacks ----

  private async failEval(e: Evaluation): Promise<void> {
    const now = this.nowNanos();
    const delayMs = (this.config.failedFollowUpDelayMs ?? 60_000) * (1 + this.random());
    const followUp: Evaluation = {
      ...newEvaluation(
        { ID: e.JobID, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type as Job['Type'], JobModifyIndex: e.JobModifyIndex },
        'failed-follow-up',
        now,
      ),
      PreviousEval: e.ID,
      WaitUntil: new Date(this.clock.now() + delayMs).toISOString(),
    };
    const failed: Evaluation = {
      ...e,
      Status: 'failed',
      StatusDescription: `evaluation reached delivery limit (${this.broker.limit})`,
      NextEval: followUp.ID,
    };
    await this.apply({ Type: 'EvalUpdate', Evals: [failed, followUp], Now: now });
  }

  private async cancelEvals(evals: Evaluation[]): Promise<void> {
    if (evals.length === 0 || this.closed) return;
    const canceled = evals.map((e) => ({ ...e, Status: 'canceled' as const, StatusDescription: 'evaluation superseded by a newer one of the same job' }));
    await this.apply({ Type: 'EvalUpdate', Evals: canceled, Now: this.nowNanos() });
  }

  private nowNanos(): number {
    return this.clock.now() * 1_000_000;
  }

  private logError(err: unknown, what: string): void {
    if (this.closed) return;
    this.config.logger?.error({ err }, `server: ${what} failed`);
  }
}

/**
 * Decodes a log payload and applies it; the error instead when either fails. The FSM applies
 * all or nothing, so a failed entry leaves the state as it was, live and on replay alike.
 */
function applyEntry(fsm: Fsm, payload: string, index: number): { cmd: Command; events: StreamEvent[] } | Error {
  try {
    const cmd = decodeCommand(payload);
    return { cmd, events: fsm.apply(cmd, index) };
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** The scheduler lookup of src/scheduler/index.ts, loaded lazily (it may not be built yet). */
async function loadSchedulerLookup(): Promise<FactoryLookup> {
  const spec = '../scheduler/index.js';
  try {
    const mod = (await import(spec)) as { schedulerFactoryFor?: FactoryLookup };
    if (mod.schedulerFactoryFor) return mod.schedulerFactoryFor;
  } catch {
    // not available: no evaluations can be processed until it is
  }
  return () => undefined;
}

