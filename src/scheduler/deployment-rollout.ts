/**
 * The deployment side of reconciliation: which deployment a job's rollout belongs to, which
 * older ones to cancel, and how many destructive updates a group may start now. Pure: the
 * reconciler calls these with the job, its allocations and its latest deployment.
 */
import type {
  Allocation,
  Deployment,
  DeploymentState,
  DeploymentStatusUpdate,
  Job,
  TaskGroup,
  UpdateStrategy,
} from '../structs/index.js';
import { isActiveDeployment, isHaltedDeployment } from '../structs/deployment.js';

/** The StatusDescription texts of deployments, with Nomad's wording. */
export const DeploymentDescription = {
  Running: 'Deployment is running',
  RunningNeedsPromotion: 'Deployment is running but requires manual promotion',
  RunningAutoPromotion: 'Deployment is running pending automatic promotion',
  Paused: 'Deployment is paused',
  Successful: 'Deployment completed successfully',
  StoppedJob: 'Cancelled because job is stopped',
  NewerJob: 'Cancelled due to newer version of job',
  FailedAllocations: 'Failed due to unhealthy allocations',
  ProgressDeadline: 'Failed due to progress deadline',
  FailedByUser: 'Deployment marked as failed',
} as const;
export type DeploymentDescription = (typeof DeploymentDescription)[keyof typeof DeploymentDescription];

/** The group's rolling-update strategy, when it has one that deployments follow. */
export function rolloutStrategy(job: Job, group: TaskGroup): UpdateStrategy | null {
  if (job.Type !== 'service') return null;
  const u = group.Update;
  return u && u.MaxParallel > 0 ? u : null;
}

/** True when an allocation was placed by this version of the job. */
export function isCurrentVersion(a: Allocation, job: Job): boolean {
  return a.Job === job || (a.Job !== null && a.Job.Version === job.Version && a.Job.CreateIndex === job.CreateIndex);
}

/** What the reconciler starts from: the deployment of this job version, and what to cancel. */
export interface DeploymentBaseline {
  /** The active or failed deployment of the current job version; null when none or done. */
  current: Deployment | null;
  /** The current version's deployment completed successfully: nothing to roll out. */
  succeeded: boolean;
  updates: DeploymentStatusUpdate[];
}

/**
 * Picks the deployment of the job's current version from the latest one, cancelling an active
 * deployment of an older version or of a stopped job (Nomad's cancelUnneededDeployments).
 */
export function deploymentBaseline(job: Job | undefined, latest: Deployment | undefined): DeploymentBaseline {
  const out: DeploymentBaseline = { current: null, succeeded: false, updates: [] };
  if (!latest) return out;
  const stopped = !job || job.Stop;
  const sameVersion = !stopped && latest.JobVersion === job.Version && latest.JobCreateIndex === job.CreateIndex;
  if (!sameVersion) {
    if (isActiveDeployment(latest)) {
      out.updates.push({
        DeploymentID: latest.ID,
        Status: 'cancelled',
        StatusDescription: stopped ? DeploymentDescription.StoppedJob : DeploymentDescription.NewerJob,
      });
    }
    return out;
  }
  if (latest.Status === 'successful') out.succeeded = true;
  else if (latest.Status !== 'cancelled') out.current = latest;
  return out;
}

/** A new running deployment of a job version, without groups yet. */
export function newDeployment(job: Job, id: string): Deployment {
  return {
    ID: id,
    Namespace: job.Namespace,
    JobID: job.ID,
    JobVersion: job.Version,
    JobModifyIndex: job.JobModifyIndex,
    JobSpecModifyIndex: job.JobModifyIndex,
    JobCreateIndex: job.CreateIndex,
    IsMultiregion: false,
    TaskGroups: {},
    Status: 'running',
    StatusDescription: DeploymentDescription.Running,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** A group's deployment state as a new deployment starts it. */
export function newDeploymentState(group: TaskGroup, strategy: UpdateStrategy, nowMs: number): DeploymentState {
  const deadlineMs = strategy.ProgressDeadline / 1e6;
  return {
    AutoRevert: strategy.AutoRevert,
    AutoPromote: strategy.AutoPromote,
    ProgressDeadline: strategy.ProgressDeadline,
    RequireProgressBy: deadlineMs > 0 ? new Date(nowMs + deadlineMs).toISOString() : null,
    Promoted: false,
    PlacedCanaries: null,
    DesiredCanaries: 0,
    DesiredTotal: group.Count,
    PlacedAllocs: 0,
    HealthyAllocs: 0,
    UnhealthyAllocs: 0,
  };
}

/** True when an allocation is an unpromoted canary of the deployment. */
export function isUnpromotedCanary(a: Allocation, d: Deployment | null): boolean {
  if (!d || a.DeploymentID !== d.ID || a.DeploymentStatus?.Canary !== true) return false;
  return d.TaskGroups[a.TaskGroup]?.Promoted !== true;
}

/**
 * How many destructive updates a group may start now: max_parallel less the deployment's
 * allocations not yet healthy; none while the deployment is paused or failed or one of its
 * allocations is unhealthy (Nomad's computeLimit).
 */
export function destructiveLimit(strategy: UpdateStrategy | null, d: Deployment | null, liveGroupAllocs: readonly Allocation[]): number {
  if (!strategy) return Number.POSITIVE_INFINITY;
  if (!d) return strategy.MaxParallel;
  if (isHaltedDeployment(d)) return 0;
  let limit = strategy.MaxParallel;
  for (const a of liveGroupAllocs) {
    if (a.DeploymentID !== d.ID) continue;
    if (a.DeploymentStatus?.Healthy === false) return 0;
    if (a.DeploymentStatus?.Healthy !== true) limit--;
  }
  return Math.max(0, limit);
}
