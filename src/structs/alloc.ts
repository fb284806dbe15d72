/**
 * Allocations: a task group placed on a node, with its desired and client status, task
 * states and events. Nomad's field names; *Time fields are Unix nanoseconds, StartedAt,
 * FinishedAt and LastRestart are RFC 3339 strings.
 */
import type { Job } from './job.js';
import type { Nanos } from './duration.js';
import type { AllocatedResources, Resources } from './resources.js';

/** What the servers want of an allocation. */
export const AllocDesiredStatus = {
  Run: 'run',
  Stop: 'stop',
  Evict: 'evict',
} as const;
export type AllocDesiredStatus = (typeof AllocDesiredStatus)[keyof typeof AllocDesiredStatus];

/** What the client reports of an allocation. */
export const AllocClientStatus = {
  Pending: 'pending',
  Running: 'running',
  Complete: 'complete',
  Failed: 'failed',
  Lost: 'lost',
  Unknown: 'unknown',
} as const;
export type AllocClientStatus = (typeof AllocClientStatus)[keyof typeof AllocClientStatus];

const ALLOC_CLIENT_STATUSES: ReadonlySet<string> = new Set(Object.values(AllocClientStatus));
const TERMINAL_CLIENT_STATUSES: ReadonlySet<AllocClientStatus> = new Set([
  AllocClientStatus.Complete,
  AllocClientStatus.Failed,
  AllocClientStatus.Lost,
]);

/** True when `v` is one of the client statuses (for checking what a client reports). */
export function isAllocClientStatus(v: unknown): v is AllocClientStatus {
  return typeof v === 'string' && ALLOC_CLIENT_STATUSES.has(v);
}

/**
 * True for the client statuses the servers decide (lost, unknown) rather than the client: only
 * these travel in a plan's stop updates and override what a client reported.
 */
export function isServerDecidedClientStatus(s: AllocClientStatus | ''): s is 'lost' | 'unknown' {
  return s === AllocClientStatus.Lost || s === AllocClientStatus.Unknown;
}

/** True when an allocation's client status is final: it will not run again. */
export function isTerminalClientStatus(s: AllocClientStatus): boolean {
  return TERMINAL_CLIENT_STATUSES.has(s);
}

/**
 * True when an allocation will not run (again): desired stop/evict or a terminal client status
 * (Nomad's Allocation.TerminalStatus). Its negation is "live": it holds resources on its node.
 */
export function isTerminalAlloc(a: Pick<Allocation, 'DesiredStatus' | 'ClientStatus'>): boolean {
  return a.DesiredStatus !== AllocDesiredStatus.Run || isTerminalClientStatus(a.ClientStatus);
}

/** True when an allocation is wanted running and its client has not given up on it. */
export function isLiveAlloc(a: Pick<Allocation, 'DesiredStatus' | 'ClientStatus'>): boolean {
  return !isTerminalAlloc(a);
}

/** The state of one task: pending, running or dead. */
export const TaskStateName = {
  Pending: 'pending',
  Running: 'running',
  Dead: 'dead',
} as const;
export type TaskStateName = (typeof TaskStateName)[keyof typeof TaskStateName];

const TASK_STATE_NAMES: ReadonlySet<string> = new Set(Object.values(TaskStateName));

/** True when `v` is one of the task states. */
export function isTaskStateName(v: unknown): v is TaskStateName {
  return typeof v === 'string' && TASK_STATE_NAMES.has(v);
}

/** Task event types with Nomad's exact strings. */
export const TaskEventType = {
  Setup: 'Task Setup',
  SetupFailure: 'Setup Failure',
  DriverFailure: 'Driver Failure',
  DriverMessage: 'Driver',
  Received: 'Received',
  FailedValidation: 'Failed Validation',
  Started: 'Started',
  Terminated: 'Terminated',
  Killing: 'Killing',
  Killed: 'Killed',
  Restarting: 'Restarting',
  NotRestarting: 'Not Restarting',
  Signaling: 'Signaling',
  RestartSignal: 'Restart Signaled',
  SiblingFailed: 'Sibling Task Failed',
  LeaderDead: 'Leader Task Dead',
  MainDead: 'Main Tasks Dead',
  HookFailed: 'Task hook failed',
  /** A hook's notice, e.g. a template's change script that ran. */
  HookMessage: 'Task hook message',
  WaitingShutdownDelay: 'Waiting for shutdown delay',
  SkippingShutdownDelay: 'Skipping shutdown delay',
  TaskPluginHealthy: 'Plugin became healthy',
  Skipped: 'Skipped',
  ClientRestart: 'Restarted',
  /** A template's notice (Nomad's consul-template source), e.g. "Missing: nomad.var.block(…)". */
  Template: 'Template',
} as const;
export type TaskEventType = (typeof TaskEventType)[keyof typeof TaskEventType];

/** One event in a task's history (capped at 10 per task). */
export interface TaskEvent {
  Type: string;
  /** Unix nanoseconds. */
  Time: number;
  DisplayMessage: string;
  Details: Record<string, string>;
  Message: string;
  FailsTask: boolean;
  RestartReason: string;
  SetupError: string;
  DriverError: string;
  DriverMessage: string;
  ExitCode: number;
  Signal: number;
  KillReason: string;
  KillTimeout: Nanos;
  KillError: string;
  StartDelay: Nanos;
  DownloadError: string;
  ValidationError: string;
  DiskLimit: number;
  FailedSibling: string;
  VaultError: string;
  TaskSignalReason: string;
  TaskSignal: string;
  GenericSource: string;
}

/** A task's state inside an allocation. */
export interface TaskState {
  State: TaskStateName;
  Failed: boolean;
  Restarts: number;
  /** RFC 3339, or null when never restarted. */
  LastRestart: string | null;
  /** RFC 3339, or null. */
  StartedAt: string | null;
  /** RFC 3339, or null. */
  FinishedAt: string | null;
  Events: TaskEvent[];
}

/** One past reschedule of an allocation. */
export interface RescheduleEvent {
  /** Unix nanoseconds. */
  RescheduleTime: number;
  PrevAllocID: string;
  PrevNodeID: string;
  Delay: Nanos;
}

export interface RescheduleTracker {
  Events: RescheduleEvent[];
}

/** Requested transitions (migrate, reschedule) set by the servers. */
export interface DesiredTransition {
  Migrate?: boolean;
  Reschedule?: boolean;
  ForceReschedule?: boolean;
  NoShutdownDelay?: boolean;
}

/** Why the scheduler could or could not place an allocation. */
export interface AllocMetric {
  NodesEvaluated: number;
  NodesFiltered: number;
  NodesInPool: number;
  NodesAvailable: Record<string, number>;
  ClassFiltered: Record<string, number> | null;
  ConstraintFiltered: Record<string, number> | null;
  NodesExhausted: number;
  ClassExhausted: Record<string, number> | null;
  DimensionExhausted: Record<string, number> | null;
  QuotaExhausted: string[] | null;
  ResourcesExhausted: Record<string, Resources> | null;
  Scores: Record<string, number> | null;
  ScoreMetaData: { NodeID: string; Scores: Record<string, number>; NormScore: number }[] | null;
  AllocationTime: Nanos;
  CoalescedFailures: number;
}

export interface AllocDeploymentStatus {
  Healthy: boolean | null;
  Timestamp: string;
  Canary: boolean;
  ModifyIndex: number;
}

/** A client's report of one allocation (batched). */
export interface AllocClientUpdate {
  ID: string;
  NodeID: string;
  ClientStatus: AllocClientStatus;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
  DeploymentStatus?: AllocDeploymentStatus | null;
  /** The group network the client set up (bridge, cni/*, none), as Nomad's AllocNetworkStatus. */
  NetworkStatus?: AllocNetworkStatus | null;
}

/** Where an allocation's own network namespace is reachable (Nomad's AllocNetworkStatus). */
export interface AllocNetworkStatus {
  InterfaceName: string;
  Address: string;
  DNS: { Servers: string[]; Searches: string[]; Options: string[] } | null;
}

/** An allocation: one instance of a task group on a node. */
export interface Allocation {
  ID: string;
  Namespace: string;
  EvalID: string;
  Name: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  Job: Job | null;
  TaskGroup: string;
  AllocatedResources: AllocatedResources | null;
  Metrics: AllocMetric | null;
  DesiredStatus: AllocDesiredStatus;
  DesiredDescription: string;
  DesiredTransition: DesiredTransition;
  ClientStatus: AllocClientStatus;
  ClientDescription: string;
  TaskStates: Record<string, TaskState> | null;
  DeploymentID: string;
  DeploymentStatus: AllocDeploymentStatus | null;
  /** The allocation's own network (group network bridge, cni/*, none) as its client reported it. */
  NetworkStatus?: AllocNetworkStatus | null;
  FollowupEvalID: string;
  PreviousAllocation: string;
  NextAllocation: string;
  RescheduleTracker: RescheduleTracker | null;
  PreemptedAllocations: string[] | null;
  PreemptedByAllocation: string;
  CreateIndex: number;
  ModifyIndex: number;
  AllocModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  /** Unix nanoseconds. */
  ModifyTime: number;
}

/** One row of GET /v1/allocations and GET /v1/job/:id/allocations. */
export interface AllocListStub {
  ID: string;
  EvalID: string;
  Name: string;
  Namespace: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  JobType: string;
  JobVersion: number;
  TaskGroup: string;
  AllocatedResources: AllocatedResources | null;
  DesiredStatus: AllocDesiredStatus;
  DesiredDescription: string;
  ClientStatus: AllocClientStatus;
  ClientDescription: string;
  DesiredTransition: DesiredTransition;
  TaskStates: Record<string, TaskState> | null;
  DeploymentStatus: AllocDeploymentStatus | null;
  FollowupEvalID: string;
  NextAllocation: string;
  PreviousAllocation: string;
  RescheduleTracker: RescheduleTracker | null;
  PreemptedAllocations: string[] | null;
  PreemptedByAllocation: string;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
}

/** Builds the list stub of an allocation. */
export function allocStub(a: Allocation): AllocListStub {
  return {
    ID: a.ID,
    EvalID: a.EvalID,
    Name: a.Name,
    Namespace: a.Namespace,
    NodeID: a.NodeID,
    NodeName: a.NodeName,
    JobID: a.JobID,
    JobType: a.Job?.Type ?? '',
    JobVersion: a.Job?.Version ?? 0,
    TaskGroup: a.TaskGroup,
    AllocatedResources: a.AllocatedResources,
    DesiredStatus: a.DesiredStatus,
    DesiredDescription: a.DesiredDescription,
    ClientStatus: a.ClientStatus,
    ClientDescription: a.ClientDescription,
    DesiredTransition: a.DesiredTransition,
    TaskStates: a.TaskStates,
    DeploymentStatus: a.DeploymentStatus,
    FollowupEvalID: a.FollowupEvalID,
    NextAllocation: a.NextAllocation,
    PreviousAllocation: a.PreviousAllocation,
    RescheduleTracker: a.RescheduleTracker,
    PreemptedAllocations: a.PreemptedAllocations ?? null,
    PreemptedByAllocation: a.PreemptedByAllocation ?? '',
    CreateIndex: a.CreateIndex,
    ModifyIndex: a.ModifyIndex,
    CreateTime: a.CreateTime,
    ModifyTime: a.ModifyTime,
  };
}
