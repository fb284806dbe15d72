/**
 * Nomad's JobStatusesJob (`/v1/jobs/statuses`, the list Nomad's web UI shows): per job its
 * identity, its allocations in brief, the sum of its groups' counts, its children's statuses
 * (periodic and parameterized parents) and its latest deployment.
 */
import type { Allocation } from '../structs/alloc.js';
import { isActiveDeployment, type Deployment } from '../structs/deployment.js';
import type { Job } from '../structs/job.js';

export interface JobStatusesAlloc {
  ID: string;
  Group: string;
  ClientStatus: string;
  NodeID: string;
  DeploymentStatus: { Canary: boolean; Healthy: boolean | null };
  JobVersion: number;
  FollowupEvalID: string;
  HasPausedTask: boolean;
}

export interface JobStatusesLatestDeployment {
  ID: string;
  IsActive: boolean;
  JobVersion: number;
  Status: string;
  StatusDescription: string;
  AllAutoPromote: boolean;
  RequiresPromotion: boolean;
}

export interface JobStatusesJob {
  ID: string;
  Namespace: string;
  Name: string;
  Type: string;
  NodePool: string;
  Datacenters: string[];
  Priority: number;
  Version: number;
  SubmitTime: number;
  ModifyIndex: number;
  Allocs: JobStatusesAlloc[];
  GroupCountSum: number;
  ChildStatuses: string[] | null;
  ParentID: string;
  LatestDeployment: JobStatusesLatestDeployment | null;
  Stop: boolean;
  IsPack: boolean;
  Status: string;
}

function latestDeployment(deployments: readonly Deployment[]): JobStatusesLatestDeployment | null {
  const d = deployments.reduce<Deployment | null>((best, x) => (best === null || x.CreateIndex > best.CreateIndex ? x : best), null);
  if (!d) return null;
  const groups = Object.values(d.TaskGroups ?? {});
  const canaryGroups = groups.filter((g) => g.DesiredCanaries > 0);
  return {
    ID: d.ID,
    IsActive: isActiveDeployment(d),
    JobVersion: d.JobVersion,
    Status: d.Status,
    StatusDescription: d.StatusDescription,
    AllAutoPromote: canaryGroups.length > 0 && canaryGroups.every((g) => g.AutoPromote),
    RequiresPromotion: canaryGroups.some((g) => !g.Promoted),
  };
}

/** The status of one job, from its allocations, deployments and (for parents) children. */
export function jobStatusesJob(job: Job, allocs: readonly Allocation[], deployments: readonly Deployment[], children: readonly Job[] | null): JobStatusesJob {
  return {
    ID: job.ID,
    Namespace: job.Namespace,
    Name: job.Name,
    Type: job.Type,
    NodePool: job.NodePool || 'default',
    Datacenters: job.Datacenters ?? [],
    Priority: job.Priority,
    Version: job.Version,
    SubmitTime: job.SubmitTime,
    ModifyIndex: job.ModifyIndex,
    Allocs: allocs.map((a) => ({
      ID: a.ID,
      Group: a.TaskGroup,
      ClientStatus: a.ClientStatus,
      NodeID: a.NodeID,
      DeploymentStatus: { Canary: a.DeploymentStatus?.Canary ?? false, Healthy: a.DeploymentStatus?.Healthy ?? null },
      JobVersion: a.Job?.Version ?? job.Version,
      FollowupEvalID: a.FollowupEvalID ?? '',
      HasPausedTask: false,
    })),
    GroupCountSum: job.TaskGroups.reduce((n, g) => n + (g.Count ?? 0), 0),
    ChildStatuses: children ? children.map((c) => c.Status) : null,
    ParentID: job.ParentID ?? '',
    LatestDeployment: latestDeployment(deployments),
    Stop: job.Stop,
    IsPack: false,
    Status: job.Status,
  };
}
