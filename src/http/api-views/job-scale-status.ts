/**
 * Nomad's JobScaleStatusResponse (`GET /v1/job/:id/scale`, `nomad job scale` without a count
 * and `nomad job status` of scaled jobs): per task group the desired count and how many live
 * allocations are placed, running, healthy and unhealthy. Canaries and terminal allocations
 * are not counted, as in Nomad.
 */
import { isTerminalAlloc, type Allocation } from '../../structs/alloc.js';
import type { Job } from '../../structs/job.js';
import type { ScalingEvent } from '../../server/state/job-scaling-events.js';

/** One task group's scale status. */
export interface TaskGroupScaleStatus {
  Desired: number;
  Placed: number;
  Running: number;
  Healthy: number;
  Unhealthy: number;
  /** Scaling events, newest first (null when there are none). */
  Events: ScalingEvent[] | null;
}

/** The scale status of a job. */
export interface JobScaleStatus {
  JobID: string;
  Namespace: string;
  JobCreateIndex: number;
  JobModifyIndex: number;
  JobStopped: boolean;
  TaskGroups: Record<string, TaskGroupScaleStatus>;
}

/** True when an allocation no longer counts: the servers stopped it or it finished. */
/** Builds the scale status of `job` from its allocations. */
export function jobScaleStatus(job: Job, allocs: readonly Allocation[], eventsOf?: (group: string) => ScalingEvent[]): JobScaleStatus {
  const groups: Record<string, TaskGroupScaleStatus> = {};
  for (const tg of job.TaskGroups) {
    const events = eventsOf?.(tg.Name) ?? [];
    groups[tg.Name] = { Desired: tg.Count, Placed: 0, Running: 0, Healthy: 0, Unhealthy: 0, Events: events.length > 0 ? events : null };
  }
  for (const a of allocs) {
    if (a.DeploymentStatus?.Canary || isTerminalAlloc(a)) continue;
    const g = groups[a.TaskGroup];
    if (!g) continue;
    g.Placed++;
    if (a.ClientStatus === 'running') g.Running++;
    const healthy = a.DeploymentStatus?.Healthy;
    if (healthy === true) g.Healthy++;
    else if (healthy === false) g.Unhealthy++;
  }
  return {
    JobID: job.ID,
    Namespace: job.Namespace,
    JobCreateIndex: job.CreateIndex,
    JobModifyIndex: job.ModifyIndex,
    JobStopped: job.Stop,
    TaskGroups: groups,
  };
}
