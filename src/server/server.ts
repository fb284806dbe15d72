/**
 * The Caravan server, as a composition root: the replicated log (every committed entry applied
 * by the FSM to the state store, whoever wrote it — replication/replicated-log.ts), the leadership
 * port (leadership/), the leader's duties started and stopped with leadership (leader/), the
 * endpoints that turn requests into commands (endpoints/), snapshots (replication/snapshotter.ts)
 * and the event broker. Every write goes through `apply()`: refused on a follower, otherwise
 * proposed to the log and acknowledged once durable and applied.
 */
import { join } from 'node:path';
import type { SchedulerConfiguration } from '../structs/scheduler-config.js';
import type { AutopilotConfig, AutopilotConfigFields } from '../structs/autopilot-config.js';
import type { NodeEligibility } from '../structs/index.js';
import { systemClock, type Clock, type RandomSource } from '../time/clock.js';
import { ServerError } from './server-error.js';
import type { JobLimits } from './job-limits.js';
import type { DeploymentAction, DeregisterJobOptions, DeregisterJobResult, JobPlanResult, JobSubmissionOptions, NodeRegisterResult, NodeRegistrationAuth, RegisterJobOptions, RegisterJobResult, ScaleRequestEvent, SchedulerWorkers, ServerApi } from './server-api.js';
import type { StateReader, Table } from './state/state-reader.js';
import type { ServerConfig } from './server-config.js';
import { captureState, encodeSnapshot } from './snapshot/snapshot-encoder.js';
import { readSnapshotFile } from './snapshot/snapshot-file.js';
import type { LogBackend, LogStorageStatus } from './log/log-backend.js';
import { SqliteLogBackend } from './log/sqlite-log-backend.js';
import type { Leadership, ServerMember } from './leadership/leadership.js';
import { EmbeddedLeadership } from './leadership/embedded-leadership.js';
import { StateStore } from './state/state-store.js';
import type { ScalingEvent } from './state/job-scaling-events.js';
import type { JobSubmission } from './state/job-submissions.js';
import { Fsm } from './fsm/fsm.js';
import type { Command } from './fsm/commands.js';
import { EventBroker } from './events/event-broker.js';
import { ReplicatedLog } from './replication/replicated-log.js';
import { Snapshotter } from './replication/snapshotter.js';
import { LeaderDuties, SCHEDULERS, workerCount } from './leader/leader-duties.js';
import type { EndpointContext, FactoryLookup } from './endpoints/endpoint-context.js';
import { JobEndpoint } from './endpoints/job-endpoint.js';
import { ScalingEndpoint } from './endpoints/scaling-endpoint.js';
import { NodeEndpoint } from './endpoints/node-endpoint.js';
import { AllocEndpoint } from './endpoints/alloc-endpoint.js';
import { DeploymentEndpoint } from './endpoints/deployment-endpoint.js';
import { SystemEndpoint } from './endpoints/system-endpoint.js';
import { NamespaceEndpoint } from './endpoints/namespace-endpoint.js';
import { AclEndpoint } from './endpoints/acl-endpoint.js';
import { ClientIntroductionEndpoint } from './endpoints/client-introduction-endpoint.js';
import { NodePoolEndpoint } from './endpoints/node-pool-endpoint.js';
import { TaskVariablesEndpoint } from './endpoints/task-variables-endpoint.js';
import { KeyringEndpoint } from './endpoints/keyring-endpoint.js';
import { WorkloadIdentityEndpoint } from './endpoints/workload-identity-endpoint.js';
import { VariableEndpoint } from './endpoints/variable-endpoint.js';
import { HostVolumeEndpoint } from './endpoints/host-volume-endpoint.js';
import { EvalEndpoint } from './endpoints/eval-endpoint.js';
import { VersionTagEndpoint } from './endpoints/version-tag-endpoint.js';
import { ServiceRegistrationEndpoint } from './endpoints/service-registration-endpoint.js';

export type { ServerConfig } from './server-config.js';

/** A Caravan server (see the file comment). Create with Server.open(). */
export class Server implements ServerApi {
  readonly state: StateReader;
  readonly store: StateStore;
  readonly events: EventBroker;
  readonly eventBroker: EventBroker;
  readonly leadership: Leadership;
  private readonly clock: Clock;
  private readonly random: RandomSource;
  /** ACL tokens, policies and roles, and the resolution of secrets (endpoints/acl-endpoint.ts). */
  readonly acl: AclEndpoint;
  /** Client introduction tokens, and the check of new nodes' registrations (endpoints/client-introduction-endpoint.ts). */
  readonly clientIntroduction: ClientIntroductionEndpoint;
  private readonly jobs: JobEndpoint;
  private readonly scaling: ScalingEndpoint;
  private readonly nodes: NodeEndpoint;
  private readonly allocs: AllocEndpoint;
  private readonly deployments: DeploymentEndpoint;
  private readonly system: SystemEndpoint;
  private readonly namespaceEndpoint: NamespaceEndpoint;
  /** Node pool writes (GET reads go through `state`). */
  readonly nodePools: NodePoolEndpoint;
  /** Variable writes (reads go through `state`). */
  readonly variables: VariableEndpoint;
  readonly taskVariables: TaskVariablesEndpoint;
  /** The workload identity keyring (root keys, JWKS). */
  readonly keyring: KeyringEndpoint;
  /** Signs tasks' workload identities and resolves them as tokens. */
  readonly workloadIdentities: WorkloadIdentityEndpoint;
  private readonly evalEndpoint: EvalEndpoint;
  /** Job version tags (PUT/DELETE /v1/job/:id/versions/:tag/tag). */
  readonly versionTags: VersionTagEndpoint;
  /** Native service registration writes (reads go through `state`). */
  readonly serviceRegistrations: ServiceRegistrationEndpoint;
  /** Dynamic host volume writes and the clients' reports (reads go through `state`). */
  readonly hostVolumes: HostVolumeEndpoint;
  private readonly snapshotter: Snapshotter;
  private replicated!: ReplicatedLog;
  /** The running leader duties; null on a follower (and while a new leader catches up). */
  private leader: LeaderDuties | null = null;
  /** Leadership changes, applied one after the other. */
  private transition: Promise<void> = Promise.resolve();
  private unwatchLeadership: () => void = () => undefined;
  private closed = false;
  private advertised: string;

  private constructor(
    readonly config: ServerConfig,
    private readonly log: LogBackend,
    private readonly factoryFor: FactoryLookup,
  ) {
    this.advertised = config.advertiseAddr ?? '';
    this.clock = config.clock ?? systemClock;
    this.random = config.random ?? Math.random;
    this.store = new StateStore(config.clock);
    this.state = this.store;
    this.events = new EventBroker(config.eventBufferSize ?? 4096);
    this.eventBroker = this.events;
    this.leadership = config.leadership ?? new EmbeddedLeadership({ name: config.nodeName ?? 'server', address: () => this.advertised });
    const ctx: EndpointContext = {
      config,
      store: this.store,
      clock: this.clock,
      random: this.random,
      factoryFor,
      apply: (cmd) => this.apply(cmd),
      resetHeartbeat: (nodeId) => this.resetHeartbeat(nodeId),
      clearHeartbeat: (nodeId) => this.leader?.heartbeats.clear(nodeId),
      variableLocks: () => {
        if (this.leader) return this.leader.variableLocks;
        throw this.notLeader();
      },
      nowNanos: () => this.clock.now() * 1_000_000,
    };
    this.keyring = new KeyringEndpoint(ctx);
    this.workloadIdentities = new WorkloadIdentityEndpoint(ctx, this.keyring);
    this.jobs = new JobEndpoint(ctx);
    this.scaling = new ScalingEndpoint(ctx, this.jobs);
    this.clientIntroduction = new ClientIntroductionEndpoint(ctx);
    this.nodes = new NodeEndpoint(ctx, this.clientIntroduction);
    this.allocs = new AllocEndpoint(ctx);
    this.deployments = new DeploymentEndpoint(ctx, this.jobs);
    this.system = new SystemEndpoint(ctx);
    this.namespaceEndpoint = new NamespaceEndpoint(ctx);
    this.acl = new AclEndpoint(ctx, this.workloadIdentities);
    this.nodePools = new NodePoolEndpoint(ctx);
    this.variables = new VariableEndpoint(ctx);
    this.taskVariables = new TaskVariablesEndpoint(ctx, this.workloadIdentities);
    this.evalEndpoint = new EvalEndpoint(ctx);
    this.versionTags = new VersionTagEndpoint(ctx);
    this.serviceRegistrations = new ServiceRegistrationEndpoint(ctx);
    this.hostVolumes = new HostVolumeEndpoint(ctx);
    this.snapshotter = new Snapshotter({
      log,
      store: this.store,
      lastSnapshotIndex: 0,
      appliedIndex: () => this.replicated.appliedIndex(),
      // Only the leader snapshots (see snapshotter.ts).
      enabled: () => this.leadership.isLeader(),
      threshold: config.snapshotThreshold,
      rowsPerChunk: config.snapshotRowsPerChunk,
      logger: config.logger,
      onSnapshot: config.onSnapshot,
    });
  }

  /**
   * Opens the server: restores the state from the log (latest snapshot + its tail), follows the
   * log from there, starts the leadership and, when leader, the leader's duties.
   */
  static async open(config: ServerConfig): Promise<Server> {
    const log = config.logBackend ?? SqliteLogBackend.open(join(config.dataDir, 'server'));
    const factoryFor = config.schedulerFactory ?? (await loadSchedulerLookup());
    const server = new Server(config, log, factoryFor);
    server.replicated = await ReplicatedLog.open({
      log,
      store: server.store,
      fsm: new Fsm(server.store),
      events: server.events,
      clock: server.clock,
      logger: config.logger,
      onApplied: (cmd, index, events) => server.leader?.react(cmd, index, events),
      onAdvance: () => server.snapshotter.maybeSnapshot(),
      onSnapshotLoaded: (index) => server.snapshotter.loaded(index),
    });
    server.unwatchLeadership = server.leadership.onChange((leader) => server.leadershipChanged(leader));
    await server.leadership.start();
    // The port may have reported leadership before we listened, or not at all (embedded).
    server.leadershipChanged(server.leadership.isLeader());
    await server.transition;
    return server;
  }

  // ---- leadership ----

  /** Queues a leadership change: the duties start after the log is caught up, and stop on loss. */
  private leadershipChanged(leader: boolean): void {
    this.transition = this.transition
      .then(() => (leader ? this.establishLeadership() : this.revokeLeadership()))
      .catch((err: unknown) => this.config.logger?.error({ err }, 'server: leadership transition failed'));
  }

  private async establishLeadership(): Promise<void> {
    if (this.leader || this.closed) return;
    // Apply everything committed before leading (Nomad's barrier): the duties start from the
    // whole state, and this leader's index is ahead of any the previous leader answered.
    await this.replicated.catchUp();
    if (!this.leadership.isLeader() || this.closed || this.leader) return;
    const duties = new LeaderDuties({
      config: this.config,
      store: this.store,
      clock: this.clock,
      random: this.random,
      factoryFor: this.factoryFor,
      logger: this.config.logger,
      apply: (cmd) => this.apply(cmd),
      registerJob: (job) => this.jobs.registerJob(job),
      autoRevert: (job) => this.jobs.autoRevert(job),
      markMissedHeartbeat: (nodeId) => this.nodes.markMissedHeartbeat(nodeId),
      collectGarbage: () => this.system.collectGarbage(),
    });
    this.leader = duties;
    duties.start();
    // Nomad's leader makes the keyring's first key when it takes office (its identities need one).
    this.keyring.ensureActiveKey().catch((err: unknown) => this.config.logger?.warn({ err: String(err) }, 'server: making the first workload identity root key failed'));
    this.config.logger?.info({ index: this.replicated.appliedIndex() }, 'cluster leadership acquired');
  }

  private async revokeLeadership(): Promise<void> {
    if (await this.stopDuties()) {
      if (!this.closed) this.config.logger?.info({}, 'cluster leadership lost; following the new leader');
    }
  }

  /** Stops the leader's duties, if running; true when there were some. */
  private async stopDuties(): Promise<boolean> {
    const duties = this.leader;
    if (!duties) return false;
    this.leader = null;
    await duties.stop();
    return true;
  }

  /** The leader's running duties (broker, workers, timers …); null on a follower. */
  get duties(): LeaderDuties | null {
    return this.leader;
  }

  isLeader(): boolean {
    return this.leadership.isLeader();
  }

  /** Leading and caught up (the duties start only after the catch-up barrier): see ServerApi. */
  readyForConsistentReads(): boolean {
    return this.leader !== null && this.leadership.isLeader();
  }

  /**
   * The leader's address: its agent's HTTP "host:port" (Caravan servers have no separate RPC
   * port); "" while there is no leader, or until this leader's agent listens and advertises.
   */
  leaderAddress(): string {
    return this.leadership.leaderAddress() ?? '';
  }

  leaderTerm(): string {
    return this.leadership.term?.() ?? '';
  }

  /** Sets the address this server answers as leader and peer (the agent's real HTTP "host:port"). */
  advertise(addr: string): void {
    this.advertised = addr;
    this.leadership.advertise?.(addr);
  }

  /** The leader's scheduling workers; none on a follower (see SchedulerWorkers). */
  schedulerWorkers(): SchedulerWorkers {
    return { numSchedulers: workerCount(this.config), enabledSchedulers: [...SCHEDULERS], workers: (this.leader?.workers ?? []).map((w) => w.info()) };
  }

  /** The servers of the cluster, this one included. */
  members(): ServerMember[] {
    return this.leadership.members();
  }

  leadershipOrder(): string[] | undefined {
    return this.leadership.candidateOrder?.();
  }

  resignLeadership(): boolean {
    if (!this.leadership.resign) return false;
    this.leadership.resign();
    return true;
  }

  async forgetServer(id: string): Promise<boolean> {
    return (await this.leadership.forget?.(id)) ?? false;
  }

  peers(): string[] {
    return this.members()
      .filter((m) => m.status === 'alive')
      .map((m) => m.address);
  }

  /** Milliseconds since this server last heard from the leader (0 on the leader). */
  lastContactMs(): number {
    return this.leadership.lastContactMs();
  }

  waitForChange(tables: Table[], afterIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    return this.store.waitForChange(tables, afterIndex, timeoutMs, signal);
  }

  // ---- the write path ----

  /**
   * Proposes a command to the log; resolves with its index once it is durable and applied.
   * A follower never appends: NOT_LEADER naming the leader (NO_LEADER when there is none).
   */
  apply(cmd: Command): Promise<number> {
    if (this.closed) return Promise.reject(new ServerError('SERVER_CLOSED', {}));
    if (!this.leadership.isLeader()) return Promise.reject(this.notLeader());
    return this.replicated.propose(cmd);
  }

  private notLeader(): ServerError {
    const leader = this.leadership.leaderAddress();
    return leader ? new ServerError('NOT_LEADER', { leader }) : new ServerError('NO_LEADER', {});
  }

  private resetHeartbeat(nodeId: string): number {
    if (this.leader) return this.leader.heartbeats.reset(nodeId);
    if (!this.leadership.isLeader()) throw this.notLeader();
    // A leader still catching up: its duties give every live node a fresh TTL when they start.
    return this.config.heartbeat?.minTtlMs ?? 10_000;
  }

  /** Writes a snapshot of the current state now (tests, shutdown tooling); resolves with its index. */
  snapshotNow(): Promise<number> {
    if (this.closed) return Promise.reject(new ServerError('SERVER_CLOSED', {}));
    return this.snapshotter.snapshotNow();
  }

  /** Stops the leader's duties, resigns leadership and closes the log. Acknowledged writes are already durable. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unwatchLeadership();
    await this.transition;
    await this.revokeLeadership();
    await this.leadership.close().catch((err: unknown) => this.config.logger?.error({ err }, 'server: leaving the cluster failed'));
    this.replicated.close();
    // An unfinished snapshot is aborted at its next chunk; the previous one stays the latest.
    await this.snapshotter.close();
    this.events.close();
    this.clientIntroduction.close();
    await this.log.close();
  }

  // ---- endpoints (see endpoints/) ----

  registerJob(input: unknown, opts?: RegisterJobOptions): Promise<RegisterJobResult> {
    return this.jobs.registerJob(input, opts);
  }
  deregisterJob(namespace: string, jobId: string, opts?: DeregisterJobOptions): Promise<DeregisterJobResult> {
    return this.jobs.deregisterJob(namespace, jobId, opts);
  }
  evaluateJob(namespace: string, jobId: string, opts?: { forceReschedule?: boolean }): Promise<{ evalId: string; index: number }> {
    return this.jobs.evaluateJob(namespace, jobId, opts);
  }
  jobLimits(): JobLimits {
    return this.jobs.jobLimits();
  }
  planJob(input: unknown, opts?: JobSubmissionOptions): Promise<JobPlanResult> {
    return this.jobs.planJob(input, opts);
  }
  jobSubmission(namespace: string, jobId: string, version: number): JobSubmission | undefined {
    return this.jobs.jobSubmission(namespace, jobId, version);
  }
  revertJob(namespace: string, jobId: string, version: number, enforcePriorVersion?: number): Promise<RegisterJobResult> {
    return this.jobs.revertJob(namespace, jobId, version, enforcePriorVersion);
  }
  setJobStability(namespace: string, jobId: string, version: number, stable: boolean): Promise<{ index: number }> {
    return this.jobs.setJobStability(namespace, jobId, version, stable);
  }
  scaleJobGroup(namespace: string, jobId: string, group: string, count: number | null, event?: ScaleRequestEvent): Promise<RegisterJobResult> {
    return this.scaling.scaleJobGroup(namespace, jobId, group, count, event);
  }
  scalingEvents(namespace: string, jobId: string, group: string): ScalingEvent[] {
    return this.scaling.scalingEvents(namespace, jobId, group);
  }
  stopAlloc(allocId: string, opts?: { noShutdownDelay?: boolean }): Promise<{ evalId: string; index: number }> {
    return this.allocs.stopAlloc(allocId, opts);
  }
  updateAllocsFromClient(raw: unknown, secretId: string): Promise<{ index: number }> {
    return this.allocs.updateAllocsFromClient(raw, secretId);
  }
  registerNode(raw: unknown, auth?: NodeRegistrationAuth): Promise<NodeRegisterResult> {
    return this.nodes.registerNode(raw, auth);
  }
  heartbeatNode(nodeId: string, rawStatus: unknown, secretId: string): Promise<NodeRegisterResult> {
    return this.nodes.heartbeatNode(nodeId, rawStatus, secretId);
  }
  updateNodeEligibility(nodeId: string, eligibility: NodeEligibility): Promise<{ index: number }> {
    return this.nodes.updateNodeEligibility(nodeId, eligibility);
  }
  updateNodeDrain(nodeId: string, req: unknown): Promise<{ index: number; evalIds: string[] }> {
    return this.nodes.updateNodeDrain(nodeId, req);
  }
  evaluateNode(nodeId: string): Promise<{ evalIds: string[]; index: number }> {
    return this.nodes.evaluateNode(nodeId);
  }
  purgeNode(nodeId: string): Promise<{ evalIds: string[]; index: number }> {
    return this.nodes.purgeNode(nodeId);
  }
  deleteEvals(ids: readonly string[], byFilter: boolean): Promise<{ count: number; index: number }> {
    return this.evalEndpoint.deleteEvals(ids, byFilter);
  }
  deploymentAction(deploymentId: string, action: DeploymentAction): Promise<{ evalId: string; index: number }> {
    return this.deployments.deploymentAction(deploymentId, action);
  }
  /** Removes old terminal evals (and their terminal allocs) of dead jobs; returns how many evals. */
  collectGarbage(): Promise<number> {
    return this.system.collectGarbage();
  }
  forceGarbageCollection(): Promise<{ evals: number; jobs: number }> {
    return this.system.forceGarbageCollection();
  }
  logStorageStatus(): Promise<LogStorageStatus | null> {
    return this.log.storageStatus ? this.log.storageStatus() : Promise.resolve(null);
  }
  saveSnapshot(): { index: number; chunks: Iterable<Buffer> } {
    const capture = captureState(this.store);
    return { index: capture.index, chunks: encodeSnapshot(capture) };
  }
  restoreSnapshot(file: Buffer): Promise<{ index: number }> {
    if (this.closed) return Promise.reject(new ServerError('SERVER_CLOSED', {}));
    // Checked whole before anything changes: it decodes, and a state store takes it.
    try {
      new StateStore(this.clock).restore(readSnapshotFile(file));
    } catch (err) {
      return Promise.reject(new ServerError('SNAPSHOT_INVALID', { reason: (err as Error).message }, { cause: err }));
    }
    if (!this.leadership.isLeader()) return Promise.reject(this.notLeader());
    const cmd: Command = { Type: 'SnapshotRestore', Snapshot: file.toString('base64'), Now: this.clock.now() * 1_000_000 };
    // In line with leadership changes: the duties stop (no worker plans against the state being
    // replaced), the restore is applied through the log on every server, and the duties are built
    // again from the restored state — broker, blocked evals, heartbeat TTLs, periodic launches,
    // deployments — as on gaining leadership.
    const restored = this.transition.then(async () => {
      await this.stopDuties();
      try {
        return await this.replicated.propose(cmd);
      } finally {
        if (this.leadership.isLeader()) await this.establishLeadership();
      }
    });
    this.transition = restored.then(
      () => undefined,
      () => undefined,
    );
    return restored.then((index) => {
      this.config.logger?.info({ index }, 'server: snapshot restored');
      // A snapshot of the restored state now, so the log behind it (the restore entry carries the
      // whole file) is compacted and a restart loads the state instead of decoding the entry again.
      this.snapshotter.snapshotNow().catch((err: unknown) => {
        if (!this.closed) this.config.logger?.warn({ err }, 'server: snapshot after a restore failed (the next threshold takes one)');
      });
      return { index };
    });
  }
  reconcileJobSummaries(): Promise<{ index: number }> {
    return this.system.reconcileJobSummaries();
  }
  upsertNamespace(input: unknown): Promise<{ index: number }> {
    return this.namespaceEndpoint.upsert(input);
  }
  deleteNamespace(name: string): Promise<{ index: number }> {
    return this.namespaceEndpoint.delete(name);
  }
  schedulerConfig(): SchedulerConfiguration {
    return this.system.schedulerConfig();
  }
  autopilotConfig(): AutopilotConfig {
    return this.system.autopilotConfig();
  }
  setAutopilotConfig(config: AutopilotConfigFields, cas?: number): Promise<{ updated: boolean; index: number }> {
    return this.system.setAutopilotConfig(config, cas);
  }
  setSchedulerConfig(config: Omit<SchedulerConfiguration, 'CreateIndex' | 'ModifyIndex'>, cas?: number): Promise<{ updated: boolean; index: number }> {
    return this.system.setSchedulerConfig(config, cas);
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
