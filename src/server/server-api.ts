/**
 * The server as the HTTP layer and the in-process client see it: reads against the state
 * store (each answer carries the index it reflects), blocking on change, and the writes that
 * go through the log. Implemented by `Server` (src/server/server.ts); every write resolves only
 * once its log entry is durable and applied.
 */
import type { JobLimits } from './job-limits.js';
import type { ScalingEvent } from './state/job-scaling-events.js';
import type { JobSubmission, SubmittedSource } from './state/job-submissions.js';
import type { SchedulerConfiguration } from '../structs/scheduler-config.js';
import type { AutopilotConfig, AutopilotConfigFields } from '../structs/autopilot-config.js';
import type { TaskVariablesResponse } from '../structs/task-variables.js';
import type { RootKeyMeta } from '../structs/root-key.js';
import type { SignedIdentity } from '../structs/signed-identity.js';
import type { PublicJwk } from './endpoints/keyring-endpoint.js';
import type { ClientIntroductionTokenResponse } from '../structs/client-introduction.js';
import type { Variable } from '../structs/variable.js';
import type { JobDiff } from '../structs/job-diff/index.js';
import type { Evaluation, NodeEligibility, Plan, DesiredUpdates } from '../structs/index.js';
import type { EventBatch } from './events/event.js';
import type { SubscribeRequest } from './events/event-broker.js';
import type { AclEndpoint } from './endpoints/acl-endpoint.js';
import type { ServerMember } from './leadership/leadership.js';
import type { StateReader, Table } from './state/state-reader.js';
import type { LogStorageStatus } from './log/log-backend.js';
import type { WorkerInfo } from './worker/worker.js';
import type { HostVolumeWriteResult } from './endpoints/host-volume-endpoint.js';

export type { ServerMember } from './leadership/leadership.js';

/** Where a submitted job came from: the namespace to fill and the job ID its route names. */
export interface JobSubmissionOptions {
  /** Fills an empty Namespace. */
  namespace?: string;
  /** When the route names a job (PUT /v1/job/:id), the job's ID must be this. */
  pathJobId?: string;
}

/** Options of a job registration (PUT /v1/jobs). */
export interface RegisterJobOptions extends JobSubmissionOptions {
  enforceIndex?: boolean;
  jobModifyIndex?: number;
  preserveCounts?: boolean;
  /** The job's source (Nomad's Submission), kept with the version this registration makes. */
  submission?: SubmittedSource;
  /** The scaling event of a scale request (recorded with the version it makes). */
  scalingEvent?: { Group: string; Event: ScalingEvent };
}

/** What a scale request says about itself, recorded in its scaling event. */
export interface ScaleRequestEvent {
  Message: string;
  Error: boolean;
  Meta: Record<string, unknown> | null;
}

export interface RegisterJobResult {
  evalId: string;
  evalCreateIndex: number;
  jobModifyIndex: number;
  index: number;
  warnings: string;
}

export interface DeregisterJobOptions {
  purge?: boolean;
  noShutdownDelay?: boolean;
}

export interface DeregisterJobResult {
  evalId: string;
  evalCreateIndex: number;
  jobModifyIndex: number;
  index: number;
}


/**
 * How a registration authenticates besides the node's SecretID: the introduction token its
 * client presented (none: undefined or ""), or `inProcess` for the agent's own client in the
 * server's process (-dev), which needs no introduction.
 */
export interface NodeRegistrationAuth {
  introToken?: string;
  inProcess?: boolean;
}

export interface NodeRegisterResult {
  /** Nanoseconds the client has to heartbeat again. */
  heartbeatTtl: number;
  index: number;
}

/** The answer to `job plan`: what the scheduler would do, without doing it. */
export interface JobPlanResult {
  annotations: Record<string, DesiredUpdates>;
  failedTGAllocs: Evaluation['FailedTGAllocs'];
  plan: Plan | null;
  jobModifyIndex: number;
  index: number;
  /** The contextual diff from the registered job to the submitted one, annotated with the plan. */
  diff: JobDiff;
}


/**
 * A server's scheduling-worker pool. Caravan runs its workers on the leader only (they take
 * evaluations from the leader's in-process broker), so a follower reports none.
 */
export interface SchedulerWorkers {
  numSchedulers: number;
  enabledSchedulers: string[];
  workers: WorkerInfo[];
}

/** What the HTTP layer and an in-process client call on a server. */
export interface ServerApi {
  readonly state: StateReader;
  /**
   * The event broker behind /v1/event/stream (an EventBroker): replays batches after
   * `req.index`, then follows. Optional so that servers without events still type-check.
   */
  readonly eventBroker?: { subscribe(req: SubscribeRequest): AsyncIterable<EventBatch> };
  /** ACL tokens, policies, roles and secret resolution. Optional: servers without ACLs lack it. */
  readonly acl?: AclEndpoint;
  /** Whether this server is the leader (always true for a single embedded server). */
  isLeader(): boolean;
  /** The leader's advertised "host:port"; "" while there is none. */
  leaderAddress(): string;
  /** The term of the leader this server knows (see Leadership.term), "" when none or not told. */
  leaderTerm?(): string;
  /**
   * Whether this server may answer a read without ?stale: it leads (its lease confirmed within
   * the TTL) and has caught up with the log (its leader duties run). Nomad's
   * isReadyForConsistentReads. Optional: a server without it answers whenever it leads.
   */
  readyForConsistentReads?(): boolean;
  /** The advertised addresses of the servers alive in the cluster, this one included. */
  peers(): string[];
  /** This server's scheduling workers and their pool's configuration (GET /v1/agent/schedulers). */
  schedulerWorkers?(): SchedulerWorkers;
  /** The servers of the cluster with their state (the leadership's members). */
  members?(): ServerMember[];
  /** The IDs of the servers in the order they would lead (leader first); absent with one server (embedded log). */
  leadershipOrder?(): string[] | undefined;
  /** Gives up this server's leadership and campaigns again behind the others; false when the backend cannot (embedded log). */
  resignLeadership?(): boolean;
  /** Removes failed server `id` from the member list; false when it is alive, unknown, or the backend keeps none. */
  forgetServer?(id: string): Promise<boolean>;
  /** Milliseconds since this server last heard from the leader (0 on the leader): X-Nomad-LastContact. */
  lastContactMs?(): number;
  /**
   * Resolves when `table` (or any of `tables`) moves past `afterIndex` or after timeoutMs,
   * with the table's current index. Aborting the signal resolves early.
   */
  waitForChange(tables: Table[], afterIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<number>;

  /**
   * Admits (decodes, canonicalizes, validates) and registers a job as submitted: API JSON or a
   * Job. Throws JOB_INVALID listing every problem; the state store only ever holds admitted jobs.
   */
  registerJob(job: unknown, opts?: RegisterJobOptions): Promise<RegisterJobResult>;
  /** `purge` deletes the job; `noShutdownDelay` stops its allocations without their shutdown_delay. */
  deregisterJob(namespace: string, jobId: string, opts?: DeregisterJobOptions): Promise<DeregisterJobResult>;
  /** Creates a new evaluation for a job (POST /v1/job/:id/evaluate). */
  /** A new evaluation of a job; `forceReschedule` also replaces its failed allocations now, whatever their reschedule policy says. */
  evaluateJob(namespace: string, jobId: string, opts?: { forceReschedule?: boolean }): Promise<{ evalId: string; index: number }>;
  /** The limits jobs are admitted under (job_max_count, job_max_priority, job_default_priority). */
  jobLimits?(): JobLimits;
  /** Admits a job as registerJob does and answers what the scheduler would do with it. */
  planJob(job: unknown, opts?: JobSubmissionOptions): Promise<JobPlanResult>;
  /**
   * Registers version `version` of a job again as its newest version (PUT /v1/job/:id/revert);
   * `enforcePriorVersion` must then be the current version. Optional: older servers lack it.
   */
  revertJob?(namespace: string, jobId: string, version: number, enforcePriorVersion?: number): Promise<RegisterJobResult>;
  /** Marks one version of a job stable or not (PUT /v1/job/:id/stable). */
  setJobStability?(namespace: string, jobId: string, version: number, stable: boolean): Promise<{ index: number }>;
  /**
   * Sets one group's count (PUT /v1/job/:id/scale): a new job version and its evaluation, with
   * a scaling event. A null count records the event only (no version, no evaluation).
   */
  scaleJobGroup?(namespace: string, jobId: string, group: string, count: number | null, event?: ScaleRequestEvent): Promise<RegisterJobResult>;
  /** A job group's scaling events, newest first. */
  scalingEvents?(namespace: string, jobId: string, group: string): ScalingEvent[];
  /**
   * Nomad's forced garbage collection (PUT /v1/system/gc): every terminal evaluation whose job is
   * dead or stopped goes with its terminal allocations, whatever its age, then dead jobs with
   * nothing left. Optional: servers without it answer 501.
   */
  forceGarbageCollection?(): Promise<{ evals: number; jobs: number }>;
  /** Recomputes every job summary from the allocations (PUT /v1/system/reconcile/summaries). */
  reconcileJobSummaries?(): Promise<{ index: number }>;
  /**
   * The whole state as of now in Caravan's snapshot format (JSON lines; the same the log's
   * snapshots use), for `GET /v1/operator/snapshot`. The capture is taken synchronously; the
   * chunks are built as they are read.
   */
  saveSnapshot?(): { index: number; chunks: Iterable<Buffer> };
  /** What the replicated log's storage holds (etcd's database size and keys), or null on a log that does not tell. */
  logStorageStatus?(): Promise<LogStorageStatus | null>;
  /**
   * Replaces the whole state with a saved snapshot file (PUT /v1/operator/snapshot) through the
   * log, so every server applies it; resolves once durable and applied here. SNAPSHOT_INVALID
   * (nothing changed) for a file that is not a whole snapshot Caravan reads.
   */
  restoreSnapshot?(file: Buffer): Promise<{ index: number }>;
  /** Creates or updates a namespace from its API JSON (PUT /v1/namespace/:name); 400 naming the field. */
  upsertNamespace?(input: unknown): Promise<{ index: number }>;
  /** Deletes a namespace (DELETE /v1/namespace/:name); refused for default and while it holds non-terminal jobs. */
  deleteNamespace?(name: string): Promise<{ index: number }>;
  /** The scheduler configuration (GET /v1/operator/scheduler/configuration). */
  schedulerConfig?(): SchedulerConfiguration;
  /**
   * Replaces the scheduler configuration; with `cas` set, only when the stored ModifyIndex is
   * `cas` (Updated false otherwise), as Nomad's check-and-set.
   */
  setSchedulerConfig?(config: Omit<SchedulerConfiguration, 'CreateIndex' | 'ModifyIndex'>, cas?: number): Promise<{ updated: boolean; index: number }>;
  /** The autopilot configuration (GET /v1/operator/autopilot/configuration). */
  autopilotConfig?(): AutopilotConfig;
  /**
   * Replaces the autopilot configuration; with `cas` set, only when the stored ModifyIndex is
   * `cas` (updated false otherwise), as Nomad's check-and-set.
   */
  setAutopilotConfig?(config: AutopilotConfigFields, cas?: number): Promise<{ updated: boolean; index: number }>;
  /** The source registered with one version of a job, if it was sent and kept. */
  jobSubmission?(namespace: string, jobId: string, version: number): JobSubmission | undefined;
  /** Stops one allocation and lets the scheduler replace it. */
  stopAlloc(allocId: string, opts?: { noShutdownDelay?: boolean }): Promise<{ evalId: string; index: number }>;

  /**
   * Admits (shape-checks) and registers a node as its client sent it. The Node must carry its
   * SecretID; re-registering an existing node needs the same one (403 otherwise, in every
   * enforcement). A new node must pass client introduction: `auth.introToken` is the token its
   * client presented (403 NODE_INTRODUCTION_REFUSED when the enforcement refuses it).
   */
  registerNode(node: unknown, auth?: NodeRegistrationAuth): Promise<NodeRegisterResult>;
  /**
   * Client introduction tokens (PUT /v1/acl/identity/client-introduction-token) and the count of
   * registrations without a valid one (`violations`). Optional: older servers lack it.
   */
  readonly clientIntroduction?: { createToken(raw: unknown): Promise<ClientIntroductionTokenResponse>; violations?(): number };
  /**
   * A heartbeat: resets the node's TTL and sets its status ("ready" when absent). `secretId` must
   * be the node's SecretID, as Nomad's clients send it (403 "Permission denied" otherwise).
   */
  heartbeatNode(nodeId: string, status: unknown, secretId: string): Promise<NodeRegisterResult>;
  updateNodeEligibility(nodeId: string, eligibility: NodeEligibility): Promise<{ index: number }>;
  /**
   * Sets (DrainSpec), replaces or cancels (DrainSpec null, optionally MarkEligible) a node's
   * drain; the leader's drainer then migrates its allocations. Optional: servers without it
   * answer the drain route with an error.
   */
  updateNodeDrain?(nodeId: string, req: unknown): Promise<{ index: number; evalIds: string[] }>;
  /**
   * Deletes evaluations while the eval broker is paused (DELETE /v1/evaluations); `byFilter`
   * skips missing or unsafe ones instead of refusing. Answers how many went.
   */
  deleteEvals?(ids: readonly string[], byFilter: boolean): Promise<{ count: number; index: number }>;
  /** Job version tags: tag a version (the current one without `version`), remove a tag by name. */
  readonly versionTags?: {
    tagVersion(namespace: string, jobId: string, name: string, version: number | undefined, description: string): Promise<{ index: number }>;
    untagVersion(namespace: string, jobId: string, name: string): Promise<{ index: number }>;
  };
  /** Creates node-update evaluations for the node's jobs (PUT /v1/node/:id/evaluate). */
  evaluateNode?(nodeId: string): Promise<{ evalIds: string[]; index: number }>;
  /** Removes the node, evaluating the jobs it ran (PUT /v1/node/:id/purge). */
  purgeNode?(nodeId: string): Promise<{ evalIds: string[]; index: number }>;
  /**
   * Node pool writes: create or replace (admitted all or nothing; the built-ins refused), delete
   * (refused while nodes or non-terminal jobs use the pool). Optional: servers without pools 501.
   */
  readonly nodePools?: {
    upsertNodePools(raw: readonly unknown[]): Promise<{ index: number }>;
    deleteNodePool(name: string): Promise<{ index: number }>;
  };
  /**
   * Variable writes, with optional check-and-set (`cas`): an answer carries the variable written,
   * or the `conflict` (the current variable, or an empty one when there is none) when the check
   * failed and nothing changed. Optional: servers without variables 501.
   */
  readonly variables?: {
    setVariable(raw: unknown, namespace: string, path: string, cas?: number): Promise<VariableWriteResult>;
    deleteVariable(namespace: string, path: string, cas?: number, lockId?: string): Promise<VariableWriteResult>;
    /** Lock operations (`?lock-acquire`, `?lock-renew`, `?lock-release`); a conflict when the lock does not fit. */
    acquireLock(raw: unknown, namespace: string, path: string): Promise<VariableWriteResult>;
    renewLock(raw: unknown, namespace: string, path: string): Promise<VariableWriteResult>;
    releaseLock(raw: unknown, namespace: string, path: string): Promise<VariableWriteResult>;
  };
  /**
   * Variables read for a task's templates by its node's client (`secretId`: the node's
   * SecretID), under the task's workload-identity access; may block on the variables table.
   */
  readonly taskVariables?: {
    read(raw: unknown, secretId: string, signal?: AbortSignal): Promise<TaskVariablesResponse>;
  };
  /**
   * The workload identity keyring (Nomad's Keyring RPCs). Answers carry key metadata and public
   * keys only. Optional: servers without it answer the keyring routes 501.
   */
  readonly keyring?: {
    list(): { keys: RootKeyMeta[]; index: number };
    rotate(opts: { full?: boolean; prepublish?: string }): Promise<{ key: RootKeyMeta; index: number }>;
    remove(keyId: string): Promise<number>;
    jwks(): { keys: PublicJwk[]; index: number };
    /** The server's `oidc_issuer` ("" for none). */
    issuer(): string;
  };
  /** Signs a task's workload identities for its node's client (`secretId`: the node's SecretID). */
  readonly workloadIdentities?: {
    sign(raw: unknown, secretId: string): Promise<SignedIdentity[]>;
  };
  /**
   * Native service registration writes: a client's registrations and deregistrations of its
   * allocations' services (`secretId`: its node's SecretID), and an operator's delete by ID.
   * Optional: servers without native service discovery 501.
   */
  readonly serviceRegistrations?: {
    upsertFromClient(raw: unknown, secretId: string): Promise<{ index: number }>;
    deleteFromClient(raw: unknown, secretId: string): Promise<{ index: number }>;
    deleteById(namespace: string, serviceName: string, id: string): Promise<{ index: number }>;
  };
  /**
   * Dynamic host volume writes (create, register, delete: each waits for the node's report) and
   * a client's report on its node's volumes (`secretId`: the node's SecretID). Optional:
   * servers without them answer the routes 501.
   */
  readonly hostVolumes?: {
    create(body: unknown, namespace: string): Promise<HostVolumeWriteResult>;
    register(body: unknown, namespace: string): Promise<HostVolumeWriteResult>;
    delete(id: string, namespace: string): Promise<{ index: number }>;
    reportFromClient(raw: unknown, secretId: string): Promise<{ index: number }>;
  };
  /**
   * Admits and applies a batch of client allocation updates; creates evals for failed allocs.
   * `secretId` must be the SecretID of the node of every allocation updated (403 otherwise).
   */
  updateAllocsFromClient(updates: unknown, secretId: string): Promise<{ index: number }>;
  /**
   * Promotes, fails, pauses or resumes a deployment, or sets its allocations' health by hand
   * (the /v1/deployment/* write routes). Optional: servers without deployments answer 501.
   */
  deploymentAction?(deploymentId: string, action: DeploymentAction): Promise<{ evalId: string; index: number }>;
}

/** A user's action on a deployment. */
export type DeploymentAction =
  | { Type: 'promote'; All: boolean; Groups: string[] }
  | { Type: 'fail' }
  /** A multiregion deployment blocked on its peers, marked successful (Nomad's Deployment.Unblock). */
  | { Type: 'unblock' }
  | { Type: 'pause'; Pause: boolean }
  | { Type: 'alloc-health'; HealthyAllocationIDs: string[]; UnhealthyAllocationIDs: string[] };

/** The outcome of a variable write: what was written (none for a delete), or the conflict. */
export interface VariableWriteResult {
  index: number;
  written?: Variable;
  conflict?: Variable;
}
