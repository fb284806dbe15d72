/**
 * Evaluations: the unit of scheduling work. Something changed (a job registered, a node went
 * down, an allocation failed); an evaluation asks the scheduler to reconcile.
 */
import type { AllocMetric } from './alloc.js';
import type { Nanos } from './duration.js';

export const EvalStatus = {
  Blocked: 'blocked',
  Pending: 'pending',
  Complete: 'complete',
  Failed: 'failed',
  Canceled: 'canceled',
} as const;
export type EvalStatus = (typeof EvalStatus)[keyof typeof EvalStatus];

const TERMINAL_EVAL_STATUSES: ReadonlySet<EvalStatus> = new Set([EvalStatus.Complete, EvalStatus.Failed, EvalStatus.Canceled]);

/** Why an evaluation was created, with Nomad's strings. */
export const EvalTrigger = {
  JobRegister: 'job-register',
  JobDeregister: 'job-deregister',
  PeriodicJob: 'periodic-job',
  NodeDrain: 'node-drain',
  NodeUpdate: 'node-update',
  AllocStop: 'alloc-stop',
  Scheduled: 'scheduled',
  RollingUpdate: 'rolling-update',
  DeploymentWatcher: 'deployment-watcher',
  FailedFollowUp: 'failed-follow-up',
  MaxPlans: 'max-plan-attempts',
  RetryFailedAlloc: 'alloc-failure',
  QueuedAllocs: 'queued-allocs',
  Preemption: 'preemption',
  JobScaling: 'job-scaling',
  MaxDisconnectTimeout: 'max-disconnect-timeout',
  Reconnect: 'reconnect',
} as const;
export type EvalTrigger = (typeof EvalTrigger)[keyof typeof EvalTrigger];

/** An evaluation, with Nomad's field names. */
export interface Evaluation {
  ID: string;
  Namespace: string;
  Priority: number;
  /** The scheduler type: service, batch, system, sysbatch, or "_core". */
  Type: string;
  TriggeredBy: string;
  JobID: string;
  JobModifyIndex: number;
  NodeID: string;
  NodeModifyIndex: number;
  DeploymentID: string;
  Status: EvalStatus;
  StatusDescription: string;
  Wait: Nanos;
  /** RFC 3339 or null: the eval is not to be processed before then. */
  WaitUntil: string | null;
  NextEval: string;
  PreviousEval: string;
  BlockedEval: string;
  RelatedEvals: unknown[] | null;
  FailedTGAllocs: Record<string, AllocMetric> | null;
  ClassEligibility: Record<string, boolean> | null;
  EscapedComputedClass: boolean;
  QuotaLimitReached: string;
  AnnotatePlan: boolean;
  QueuedAllocations: Record<string, number> | null;
  LeaderACL: string;
  SnapshotIndex: number;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds. */
  CreateTime: number;
  /** Unix nanoseconds. */
  ModifyTime: number;
}

/** True when an evaluation will not be processed again. */
export function isTerminalEvalStatus(s: EvalStatus): boolean {
  return TERMINAL_EVAL_STATUSES.has(s);
}
