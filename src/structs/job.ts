/**
 * The job model: Job, TaskGroup, Task and the blocks inside them, with Nomad's API field
 * names. Durations are integer nanoseconds. Defaults live in job-defaults.ts, validation in
 * job-validate.ts; this file only defines the shapes.
 */
import type { Nanos } from './duration.js';
import type { NetworkResource } from './resources.js';
import type { Resources } from './resources.js';
import type { Service } from './service.js';
import type { TaskArtifact, Template } from './template.js';
import type { ScalingPolicy } from './scaling-policy.js';
import type { WorkloadIdentity } from './workload-identity.js';
import type { VolumeMount, VolumeRequest } from './host-volume.js';

/** Job types, as Nomad names them. */
export const JobType = {
  Service: 'service',
  Batch: 'batch',
  System: 'system',
  SysBatch: 'sysbatch',
} as const;
export type JobType = (typeof JobType)[keyof typeof JobType];

/** Job status as Nomad computes it from the job's allocations and evaluations. */
export const JobStatus = {
  Pending: 'pending',
  Running: 'running',
  Dead: 'dead',
} as const;
export type JobStatus = (typeof JobStatus)[keyof typeof JobStatus];

/** A placement constraint: `LTarget Operand RTarget`, e.g. `${attr.kernel.name} = linux`. */
export interface Constraint {
  LTarget: string;
  RTarget: string;
  Operand: string;
}

/** A soft placement preference with a weight in [-100, 100]. */
export interface Affinity {
  LTarget: string;
  RTarget: string;
  Operand: string;
  Weight: number;
}

export interface SpreadTarget {
  Value: string;
  Percent: number;
}

/** Spread allocations across the values of a node attribute. */
export interface Spread {
  Attribute: string;
  Weight: number;
  SpreadTarget: SpreadTarget[] | null;
}

/** How a task group restarts failed tasks on the same node. Mode is "fail" or "delay". */
export interface RestartPolicy {
  Attempts: number;
  Interval: Nanos;
  Delay: Nanos;
  Mode: RestartMode;
  RenderTemplates?: boolean;
}

export const RestartMode = { Fail: 'fail', Delay: 'delay' } as const;
export type RestartMode = (typeof RestartMode)[keyof typeof RestartMode];

/** How failed allocations are replaced on other nodes. */
export interface ReschedulePolicy {
  Attempts: number;
  Interval: Nanos;
  Delay: Nanos;
  DelayFunction: DelayFunction;
  MaxDelay: Nanos;
  Unlimited: boolean;
}

export const DelayFunction = {
  Constant: 'constant',
  Exponential: 'exponential',
  Fibonacci: 'fibonacci',
} as const;
export type DelayFunction = (typeof DelayFunction)[keyof typeof DelayFunction];

/** Rolling update and deployment settings. */
export interface UpdateStrategy {
  Stagger: Nanos;
  MaxParallel: number;
  HealthCheck: string;
  MinHealthyTime: Nanos;
  HealthyDeadline: Nanos;
  ProgressDeadline: Nanos;
  Canary: number;
  AutoRevert: boolean;
  AutoPromote: boolean;
}

/** Migration settings used when a node drains. */
export interface MigrateStrategy {
  MaxParallel: number;
  HealthCheck: string;
  MinHealthyTime: Nanos;
  HealthyDeadline: Nanos;
}

export interface PeriodicConfig {
  Enabled: boolean;
  Spec: string;
  Specs?: string[];
  SpecType: string;
  ProhibitOverlap: boolean;
  TimeZone: string;
}

export interface ParameterizedJobConfig {
  Payload: string;
  MetaRequired: string[] | null;
  MetaOptional: string[] | null;
}

export interface EphemeralDisk {
  Sticky: boolean;
  Migrate: boolean;
  SizeMB: number;
}

/** Lifecycle hooks of a task: "prestart", "poststart" or "poststop"; sidecars keep running. */
export interface TaskLifecycle {
  Hook: LifecycleHook;
  Sidecar: boolean;
}

export const LifecycleHook = {
  Prestart: 'prestart',
  Poststart: 'poststart',
  Poststop: 'poststop',
} as const;
export type LifecycleHook = (typeof LifecycleHook)[keyof typeof LifecycleHook];

export interface LogConfig {
  MaxFiles: number;
  MaxFileSizeMB: number;
  Disabled?: boolean;
}

export interface DispatchPayloadConfig {
  File: string;
}

/** A task: one process run by a driver. */
export interface Task {
  Name: string;
  Driver: string;
  User: string;
  Lifecycle: TaskLifecycle | null;
  Config: Record<string, unknown>;
  Constraints: Constraint[] | null;
  Affinities: Affinity[] | null;
  Env: Record<string, string> | null;
  Services: Service[] | null;
  Resources: Resources;
  RestartPolicy: RestartPolicy | null;
  Meta: Record<string, string> | null;
  KillTimeout: Nanos;
  LogConfig: LogConfig;
  Artifacts: TaskArtifact[] | null;
  Templates: Template[] | null;
  DispatchPayload: DispatchPayloadConfig | null;
  Leader: boolean;
  ShutdownDelay: Nanos;
  KillSignal: string;
  Kind: string;
  /** The default workload identity as declared (null or absent: Nomad's, not exposed to the task). */
  Identity?: WorkloadIdentity | null;
  /** Named workload identities (Nomad's Task.Identities). */
  Identities?: WorkloadIdentity[] | null;
  /** `volume_mount` blocks: where the group's volumes appear in the task (null: none). Optional only for tasks built before they were kept. */
  VolumeMounts?: VolumeMount[] | null;
  /** Nomad 1.10: the task is killed this long after it started (batch and sysbatch jobs); absent: no limit. */
  MaxRunDuration?: Nanos | null;
  /** Commands a user may run in the task (`caravan action`, Nomad 1.7's `action` blocks). */
  Actions?: TaskAction[] | null;
  /** Nomad's Vault, Consul and CSI plugin blocks, kept as written: registration refuses them. */
  Vault?: Record<string, unknown> | null;
  Consul?: Record<string, unknown> | null;
  CSIPluginConfig?: Record<string, unknown> | null;
  /** Nomad Enterprise's `schedule { cron { start end timezone } }` (the task runs only inside a time window); kept, refused at registration. */
  Schedule?: Record<string, unknown> | null;
  /** Nomad Enterprise's `scaling "cpu"` / `scaling "mem"` (dynamic application sizing); kept, refused at registration. */
  ScalingPolicies?: ScalingPolicy[] | null;
  /** Nomad 1.11's `secret "name" {…}` blocks (secret providers); kept, refused at registration. */
  Secrets?: TaskSecret[] | null;
}

/** Nomad's api.Secret: a secret the client reads for the task from a provider. */
export interface TaskSecret {
  Name: string;
  Provider: string;
  Path: string;
  Config: Record<string, unknown> | null;
  Env: Record<string, string> | null;
}

/** Nomad's api.Multiregion: how a job is deployed region by region (Enterprise). */
export interface Multiregion {
  Strategy: { MaxParallel?: number; OnFailure?: string } | null;
  Regions: { Name: string; Count?: number; Datacenters?: string[]; NodePool?: string; Meta?: Record<string, string> }[] | null;
}

/** A task's `action "name" { command args }`: a command run in the task on request. */
export interface TaskAction {
  Name: string;
  Command: string;
  Args: string[] | null;
}

/** A group of tasks placed together on one node; the unit of scheduling. */
export interface TaskGroup {
  Name: string;
  Count: number;
  Constraints: Constraint[] | null;
  Affinities: Affinity[] | null;
  Spreads: Spread[] | null;
  Tasks: Task[];
  RestartPolicy: RestartPolicy | null;
  ReschedulePolicy: ReschedulePolicy | null;
  EphemeralDisk: EphemeralDisk | null;
  Update: UpdateStrategy | null;
  Migrate: MigrateStrategy | null;
  Networks: NetworkResource[] | null;
  Meta: Record<string, string> | null;
  Services: Service[] | null;
  ShutdownDelay: Nanos | null;
  StopAfterClientDisconnect: Nanos | null;
  MaxClientDisconnect: Nanos | null;
  /** `volume "name" { … }` blocks by name. */
  Volumes: Record<string, VolumeRequest> | null;
  /** The group's scaling block (null: none). Optional only for groups built before it was kept. */
  Scaling?: ScalingPolicy | null;
  /** Nomad 1.10: its tasks' default MaxRunDuration (batch and sysbatch jobs). */
  MaxRunDuration?: Nanos | null;
  /** Nomad's group Consul block, kept as written: registration refuses it. */
  Consul?: Record<string, unknown> | null;
}

/** A job's `ui` block: a markdown description and links shown with the job. */
export interface JobUIConfig {
  Description: string;
  Links: { Label: string; URL: string }[] | null;
}

/** A job: the user's declaration of what should run. */
export interface Job {
  Region: string;
  Namespace: string;
  ID: string;
  Name: string;
  Type: JobType;
  Priority: number;
  AllAtOnce: boolean;
  Datacenters: string[];
  NodePool: string;
  Constraints: Constraint[] | null;
  Affinities: Affinity[] | null;
  Spreads: Spread[] | null;
  TaskGroups: TaskGroup[];
  Update: UpdateStrategy | null;
  Periodic: PeriodicConfig | null;
  ParameterizedJob: ParameterizedJobConfig | null;
  Dispatched: boolean;
  DispatchIdempotencyToken?: string;
  Payload: string | null;
  Meta: Record<string, string> | null;
  /** The job's `ui { description link {…} }` block: what Nomad's web UI shows on the job page. */
  UI?: JobUIConfig | null;
  /** Nomad Enterprise's `multiregion` block; kept, refused at registration (Caravan runs one region). */
  Multiregion?: Multiregion | null;
  /** Nomad's `group_selection "name" { count groups }`; kept as written, refused at registration. */
  GroupSelections?: TaskGroupSelection[] | null;
  ConsulToken?: string;
  VaultToken?: string;
  /** Nomad's structs.Job always carries these ("" when unused); Caravan has no Consul or Vault. */
  ConsulNamespace?: string;
  VaultNamespace?: string;
  NomadTokenID?: string;
  Stop: boolean;
  ParentID: string;
  Status: JobStatus;
  StatusDescription: string;
  Stable: boolean;
  Version: number;
  /** A name given to this version (PUT /v1/job/:id/versions/:tag/tag); never carried to a new version. */
  VersionTag?: JobVersionTag | null;
  SubmitTime: Nanos;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
}

/** The body of PUT /v1/jobs and POST /v1/job/:id. */
export interface JobRegisterRequest {
  Job: Job;
  EnforceIndex?: boolean;
  JobModifyIndex?: number;
  PolicyOverride?: boolean;
  PreserveCounts?: boolean;
}

/** The answer to a job registration. */
export interface JobRegisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
  LastContact: number;
  KnownLeader: boolean;
}

/** Per task group counts of allocations by client status. */
export interface TaskGroupSummary {
  Queued: number;
  Complete: number;
  Failed: number;
  Running: number;
  Starting: number;
  Lost: number;
  Unknown: number;
}

export interface JobChildrenSummary {
  Pending: number;
  Running: number;
  Dead: number;
}

/** GET /v1/job/:id/summary. */
export interface JobSummary {
  JobID: string;
  Namespace: string;
  Summary: Record<string, TaskGroupSummary>;
  Children: JobChildrenSummary | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** One row of GET /v1/jobs. */
export interface JobListStub {
  ID: string;
  ParentID: string;
  Name: string;
  Namespace: string;
  Datacenters: string[];
  NodePool: string;
  Multiregion: null;
  Type: JobType;
  Priority: number;
  Periodic: boolean;
  ParameterizedJob: boolean;
  Stop: boolean;
  Status: JobStatus;
  StatusDescription: string;
  JobSummary: JobSummary | null;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
  SubmitTime: Nanos;
  Meta: Record<string, string> | null;
}

/** Nomad's JobVersionTag. */
export interface JobVersionTag {
  Name: string;
  Description: string;
  /** Unix nanoseconds. */
  TaggedTime: number;
}

/** `group_selection "name" { count groups }`: run `Count` of the listed groups (Nomad 2.0). */
export interface TaskGroupSelection {
  Name: string;
  Count: number;
  Groups: string[];
}
