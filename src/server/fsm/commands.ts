/**
 * The commands of the log: every change to cluster state is one of these, appended to the log
 * and applied by the FSM. Time travels inside the command (`Now`, Unix nanoseconds) so that
 * replaying the log reproduces the same state.
 */
import type { ScalingEvent } from '../state/job-scaling-events.js';
import type { SubmittedSource } from '../state/job-submissions.js';
import type { SchedulerConfiguration } from '../../structs/scheduler-config.js';
import type { AutopilotConfigFields } from '../../structs/autopilot-config.js';
import type { NodePool } from '../../structs/node-pool.js';
import type { JobVersionTag } from '../../structs/job.js';
import type { VariableInput, VariableLock } from '../../structs/variable.js';
import type { ServiceRegistrationInput } from '../../structs/service-registration.js';
import type {
  Allocation,
  Deployment,
  DeploymentStatusUpdate,
  DesiredTransition,
  DrainStrategy,
  Evaluation,
  Job,
  NodeEligibility,
  NodeEvent,
  NodeStatus,
  Node,
} from '../../structs/index.js';
import type { AllocClientUpdate } from '../../structs/alloc.js';
import type { DrainStatus } from '../drain/drain-status.js';
import type { Namespace } from '../../structs/namespace.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import type { AclCommand } from './acl-commands.js';

/** The command type names. */
export const CommandType = {
  JobRegister: 'JobRegister',
  JobDeregister: 'JobDeregister',
  EvalUpdate: 'EvalUpdate',
  EvalDelete: 'EvalDelete',
  ApplyPlanResults: 'ApplyPlanResults',
  NodeRegister: 'NodeRegister',
  NodeUpdateStatus: 'NodeUpdateStatus',
  NodeUpdateEligibility: 'NodeUpdateEligibility',
  NodeDeregister: 'NodeDeregister',
  NodeUpdateDrain: 'NodeUpdateDrain',
  AllocClientUpdate: 'AllocClientUpdate',
  AllocUpdateDesiredTransition: 'AllocUpdateDesiredTransition',
  DeploymentUpsert: 'DeploymentUpsert',
  DeploymentStatusUpdate: 'DeploymentStatusUpdate',
  DeploymentPromote: 'DeploymentPromote',
  DeploymentAllocHealth: 'DeploymentAllocHealth',
  JobStability: 'JobStability',
  JobSummaryReconcile: 'JobSummaryReconcile',
  SchedulerConfigSet: 'SchedulerConfigSet',
  AutopilotConfigSet: 'AutopilotConfigSet',
  ScalingEventRecord: 'ScalingEventRecord',
  NamespaceUpsert: 'NamespaceUpsert',
  NamespaceDelete: 'NamespaceDelete',
  AclBootstrap: 'AclBootstrap',
  AclTokenUpsert: 'AclTokenUpsert',
  AclTokenDelete: 'AclTokenDelete',
  AclPolicyUpsert: 'AclPolicyUpsert',
  AclPolicyDelete: 'AclPolicyDelete',
  AclRoleUpsert: 'AclRoleUpsert',
  AclRoleDelete: 'AclRoleDelete',
  AclIntroductionKeySet: 'AclIntroductionKeySet',
  RootKeyUpsert: 'RootKeyUpsert',
  RootKeyDelete: 'RootKeyDelete',
  SnapshotRestore: 'SnapshotRestore',
  NodePoolUpsert: 'NodePoolUpsert',
  JobVersionTag: 'JobVersionTag',
  NodePoolDelete: 'NodePoolDelete',
  VariableSet: 'VariableSet',
  VariableDelete: 'VariableDelete',
  VariableLock: 'VariableLock',
  ServiceRegistrationUpsert: 'ServiceRegistrationUpsert',
  ServiceRegistrationDelete: 'ServiceRegistrationDelete',
  HostVolumeUpsert: 'HostVolumeUpsert',
  HostVolumeDelete: 'HostVolumeDelete',
} as const;
export type CommandType = (typeof CommandType)[keyof typeof CommandType];

/** Registers (or updates) a job, with the evaluation it triggers. */
export interface JobRegisterCommand {
  Type: 'JobRegister';
  Job: Job;
  Eval: Evaluation | null;
  Now: number;
  /** The source sent with the registration, kept with the version it makes (optional). */
  Submission?: SubmittedSource | null;
  /** The scaling event of a `PUT /v1/job/:id/scale` that changed a count (optional). */
  ScalingEvent?: { Group: string; Event: ScalingEvent } | null;
}

/** Records a scaling event that changes no count (a scale request without Count). */
export interface ScalingEventRecordCommand {
  Type: 'ScalingEventRecord';
  Namespace: string;
  JobID: string;
  Group: string;
  Event: ScalingEvent;
  Now: number;
}

/** Marks one version of a job stable or not (PUT /v1/job/:id/stable); makes no new version. */
export interface JobStabilityCommand {
  Type: 'JobStability';
  Namespace: string;
  JobID: string;
  Version: number;
  Stable: boolean;
  Now: number;
}

/** Recomputes every job summary from the allocations (PUT /v1/system/reconcile/summaries). */
export interface JobSummaryReconcileCommand {
  Type: 'JobSummaryReconcile';
  Now: number;
}

/** Replaces the scheduler configuration (PUT /v1/operator/scheduler/configuration). */
export interface SchedulerConfigSetCommand {
  Type: 'SchedulerConfigSet';
  Config: Omit<SchedulerConfiguration, 'CreateIndex' | 'ModifyIndex'>;
  Now: number;
}

/**
 * Replaces the autopilot configuration (PUT /v1/operator/autopilot/configuration); with Cas set,
 * only when the stored ModifyIndex is Cas (checked here, in log order, as Nomad's FSM does).
 */
export interface AutopilotConfigSetCommand {
  Type: 'AutopilotConfigSet';
  Config: AutopilotConfigFields;
  Cas?: number;
  Now: number;
}

/** Stops (Purge=false) or removes (Purge=true) a job, with its evaluation. */
export interface JobDeregisterCommand {
  Type: 'JobDeregister';
  Namespace: string;
  JobID: string;
  Purge: boolean;
  /** The job's live allocations are marked to stop without their shutdown_delay. */
  NoShutdownDelay?: boolean;
  Eval: Evaluation | null;
  Now: number;
}

/** Inserts or updates evaluations. */
export interface EvalUpdateCommand {
  Type: 'EvalUpdate';
  Evals: Evaluation[];
  Now: number;
}

/** Removes evaluations and allocations (garbage collection). */
export interface EvalDeleteCommand {
  Type: 'EvalDelete';
  EvalIDs: string[];
  AllocIDs: string[];
}

/** A server-side change to an existing allocation (stop, lost, follow-up eval). */
export interface AllocStopUpdate {
  ID: string;
  DesiredStatus: Allocation['DesiredStatus'];
  DesiredDescription: string;
  ClientStatus: Allocation['ClientStatus'] | '';
  FollowupEvalID: string;
}

/**
 * What the plan applier committed: placements and in-place updates (full allocations without
 * their embedded Job; they take `Job`), stops, deployment changes and eval updates.
 */
export interface ApplyPlanResultsCommand {
  Type: 'ApplyPlanResults';
  EvalID: string;
  Job: Job | null;
  AllocsUpdated: Allocation[];
  AllocsStopped: AllocStopUpdate[];
  Deployment: Deployment | null;
  DeploymentUpdates: DeploymentStatusUpdate[];
  Evals: Evaluation[];
  Now: number;
}

/** Registers or re-registers a node, with the evaluations it triggers. */
export interface NodeRegisterCommand {
  Type: 'NodeRegister';
  Node: Node;
  Evals: Evaluation[];
  Now: number;
}

export interface NodeUpdateStatusCommand {
  Type: 'NodeUpdateStatus';
  NodeID: string;
  Status: NodeStatus;
  Event: NodeEvent | null;
  Evals: Evaluation[];
  Now: number;
}

export interface NodeUpdateEligibilityCommand {
  Type: 'NodeUpdateEligibility';
  NodeID: string;
  Eligibility: NodeEligibility;
  Evals: Evaluation[];
  Now: number;
}

/**
 * Sets, updates, cancels or completes a node's drain. A drain makes the node ineligible; a
 * cancel with MarkEligible makes it eligible again; completion leaves it ineligible (Nomad).
 */
export interface NodeUpdateDrainCommand {
  Type: 'NodeUpdateDrain';
  NodeID: string;
  /** The drain to run, with ForceDeadline and StartedAt filled in; null ends the drain. */
  DrainStrategy: DrainStrategy | null;
  MarkEligible: boolean;
  Status: DrainStatus;
  Meta: Record<string, string> | null;
  Event: NodeEvent | null;
  Evals: Evaluation[];
  Now: number;
}

export interface NodeDeregisterCommand {
  Type: 'NodeDeregister';
  NodeIDs: string[];
  /** Node-update evaluations of the jobs that had allocations there (PUT /v1/node/:id/purge); absent in older entries. */
  Evals?: Evaluation[];
  Now: number;
}

/** A batch of client allocation updates, with evals for failed allocations. */
export interface AllocClientUpdateCommand {
  Type: 'AllocClientUpdate';
  Allocs: AllocClientUpdate[];
  Evals: Evaluation[];
  Now: number;
}

export interface AllocUpdateDesiredTransitionCommand {
  Type: 'AllocUpdateDesiredTransition';
  Allocs: Record<string, DesiredTransition>;
  Evals: Evaluation[];
  Now: number;
}

export interface DeploymentUpsertCommand {
  Type: 'DeploymentUpsert';
  Deployment: Deployment;
  Now: number;
}

/**
 * Changes a deployment's status (the watcher, or a user pausing, resuming or failing it), with
 * the evaluation that continues or winds down the rollout. A successful deployment marks its
 * job version stable.
 */
export interface DeploymentStatusUpdateCommand {
  Type: 'DeploymentStatusUpdate';
  Update: DeploymentStatusUpdate;
  Eval: Evaluation | null;
  Now: number;
}

/** Promotes the canaries of a deployment's groups (all of them, or those named). */
export interface DeploymentPromoteCommand {
  Type: 'DeploymentPromote';
  DeploymentID: string;
  /** Group names to promote; null promotes every group with canaries. */
  Groups: string[] | null;
  Eval: Evaluation | null;
  Now: number;
}

/** Sets the health of a deployment's allocations by hand (PUT /v1/deployment/allocation-health). */
export interface DeploymentAllocHealthCommand {
  Type: 'DeploymentAllocHealth';
  DeploymentID: string;
  HealthyAllocationIDs: string[];
  UnhealthyAllocationIDs: string[];
  Eval: Evaluation | null;
  Now: number;
}

/** Creates or updates namespaces (PUT /v1/namespace/:name); indexes are set on apply. */
export interface NamespaceUpsertCommand {
  Type: 'NamespaceUpsert';
  Namespaces: Namespace[];
  Now: number;
}

/**
 * Deletes namespaces (DELETE /v1/namespace/:name). Applying it refuses the default namespace
 * and one that holds non-terminal jobs, as Nomad's state store does.
 */
export interface NamespaceDeleteCommand {
  Type: 'NamespaceDelete';
  Names: string[];
  Now: number;
}

/** Creates or replaces node pools (PUT /v1/node/pools); admitted and checked by the endpoint. */
export interface NodePoolUpsertCommand {
  Type: 'NodePoolUpsert';
  Pools: Omit<NodePool, 'CreateIndex' | 'ModifyIndex'>[];
  Now: number;
}

/** Deletes node pools (DELETE /v1/node/pool/:name); the endpoint checked none is used. */
export interface NodePoolDeleteCommand {
  Type: 'NodePoolDelete';
  Names: string[];
  Now: number;
}

/**
 * Tags version `Version` of a job with `Tag` (named `Name`), or with Tag null removes the tag
 * named `Name` from whichever version carries it. The endpoint checked version and name.
 */
export interface JobVersionTagCommand {
  Type: 'JobVersionTag';
  Namespace: string;
  JobID: string;
  Name: string;
  Version: number;
  Tag: JobVersionTag | null;
  Now: number;
}

/**
 * Writes a variable (PUT /v1/var/:path). With `Cas` the write happens only when the variable's
 * ModifyIndex is `Cas` (0: only when there is none), checked at apply so racing writers cannot
 * both win; a refused write changes nothing and the endpoint answers the conflict.
 */
export interface VariableSetCommand {
  Type: 'VariableSet';
  Variable: VariableInput;
  Cas?: number;
  /** The writer's lock ID: a locked variable is written only by its lock's holder (checked at apply). */
  LockID?: string;
  Now: number;
}

/** Deletes a variable (DELETE /v1/var/:path), with the same optional check-and-set and lock check. */
export interface VariableDeleteCommand {
  Type: 'VariableDelete';
  Namespace: string;
  Path: string;
  Cas?: number;
  LockID?: string;
  Now: number;
}

/**
 * Acquires a variable's lock (creating the variable if there is none; its items replaced when
 * the request brings some), or releases it (explicitly, or the leader on TTL expiry). Checked at
 * apply: an acquire of a locked variable, or a release with another lock's ID, changes nothing.
 */
export type VariableLockCommand = VariableLockAcquireCommand | VariableLockReleaseCommand;

export interface VariableLockAcquireCommand {
  Type: 'VariableLock';
  Op: 'acquire';
  Variable: VariableInput;
  Lock: VariableLock;
  Now: number;
}

export interface VariableLockReleaseCommand {
  Type: 'VariableLock';
  Op: 'release';
  Namespace: string;
  Path: string;
  LockID: string;
  Now: number;
}

/**
 * Registers (or re-registers) service instances of running allocations, as their node's client
 * sent them (the endpoint authenticated the node and checked each allocation is on it). At
 * apply, an instance of an allocation that is gone or client-terminal is skipped, so a
 * registration racing the allocation's end never outlives it; an unchanged one changes nothing.
 */
export interface ServiceRegistrationUpsertCommand {
  Type: 'ServiceRegistrationUpsert';
  Services: ServiceRegistrationInput[];
  Now: number;
}

/** Removes service registrations by ID (a client deregistering, or DELETE /v1/service/:name/:id). */
export interface ServiceRegistrationDeleteCommand {
  Type: 'ServiceRegistrationDelete';
  IDs: string[];
  Now: number;
}

/**
 * Replaces the whole state with a saved snapshot (PUT /v1/operator/snapshot). `Snapshot` is the
 * file as GET /v1/operator/snapshot wrote it (gzipped snapshot lines), base64: the endpoint
 * checked it decodes and restores before proposing, and every server decodes it again when it
 * applies the entry — on replay too — so each ends with the same state.
 */
export interface SnapshotRestoreCommand {
  Type: 'SnapshotRestore';
  Snapshot: string;
  Now: number;
}

/** Every command of the log. */
/**
 * Creates or replaces dynamic host volumes (a create or register, a node's report of what its
 * plugin made, a delete request); indexes and times are stamped on apply.
 */
export interface HostVolumeUpsertCommand {
  Type: 'HostVolumeUpsert';
  Volumes: HostVolume[];
  Now: number;
}

/** Removes dynamic host volumes by ID (their node removed them, or the plugin failed to make them). */
export interface HostVolumeDeleteCommand {
  Type: 'HostVolumeDelete';
  IDs: string[];
  Now: number;
}

export type Command =
  | JobRegisterCommand
  | JobDeregisterCommand
  | EvalUpdateCommand
  | EvalDeleteCommand
  | ApplyPlanResultsCommand
  | NodeRegisterCommand
  | NodeUpdateStatusCommand
  | NodeUpdateEligibilityCommand
  | NodeDeregisterCommand
  | NodeUpdateDrainCommand
  | AllocClientUpdateCommand
  | AllocUpdateDesiredTransitionCommand
  | DeploymentUpsertCommand
  | DeploymentStatusUpdateCommand
  | DeploymentPromoteCommand
  | DeploymentAllocHealthCommand
  | JobStabilityCommand
  | JobSummaryReconcileCommand
  | SchedulerConfigSetCommand
  | AutopilotConfigSetCommand
  | ScalingEventRecordCommand
  | NamespaceUpsertCommand
  | NamespaceDeleteCommand
  | AclCommand
  | JobVersionTagCommand
  | NodePoolUpsertCommand
  | NodePoolDeleteCommand
  | VariableSetCommand
  | VariableDeleteCommand
  | VariableLockCommand
  | ServiceRegistrationUpsertCommand
  | ServiceRegistrationDeleteCommand
  | HostVolumeUpsertCommand
  | HostVolumeDeleteCommand
  | SnapshotRestoreCommand;
