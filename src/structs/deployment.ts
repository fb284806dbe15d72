/**
 * Deployments: the progress of a job version's rollout.
 */

export const DeploymentStatus = {
  Running: 'running',
  Paused: 'paused',
  Failed: 'failed',
  Successful: 'successful',
  Cancelled: 'cancelled',
  Pending: 'pending',
  Blocked: 'blocked',
  Unblocking: 'unblocking',
  Initializing: 'initializing',
} as const;
export type DeploymentStatus = (typeof DeploymentStatus)[keyof typeof DeploymentStatus];

const ACTIVE_DEPLOYMENT_STATUSES: ReadonlySet<DeploymentStatus> = new Set([
  DeploymentStatus.Running,
  DeploymentStatus.Paused,
  DeploymentStatus.Pending,
  DeploymentStatus.Initializing,
]);
const TERMINAL_DEPLOYMENT_STATUSES: ReadonlySet<DeploymentStatus> = new Set([
  DeploymentStatus.Successful,
  DeploymentStatus.Failed,
  DeploymentStatus.Cancelled,
]);

/** True while a deployment may still progress (running, paused, pending or initializing). */
export function isActiveDeployment(d: Pick<Deployment, 'Status'>): boolean {
  return ACTIVE_DEPLOYMENT_STATUSES.has(d.Status);
}

const OPERABLE_DEPLOYMENT_STATUSES: ReadonlySet<DeploymentStatus> = new Set([DeploymentStatus.Running, DeploymentStatus.Paused]);
const HALTED_DEPLOYMENT_STATUSES: ReadonlySet<DeploymentStatus> = new Set([DeploymentStatus.Paused, DeploymentStatus.Failed]);

/** True when a user may still promote, pause, fail or set health on a deployment: running or paused. */
export function isOperableDeployment(d: Pick<Deployment, 'Status'>): boolean {
  return OPERABLE_DEPLOYMENT_STATUSES.has(d.Status);
}

/** True when a deployment places no more updates: paused or failed. */
export function isHaltedDeployment(d: Pick<Deployment, 'Status'>): boolean {
  return HALTED_DEPLOYMENT_STATUSES.has(d.Status);
}

/** True once a deployment has ended: successful, failed or cancelled. */
export function isTerminalDeploymentStatus(s: DeploymentStatus): boolean {
  return TERMINAL_DEPLOYMENT_STATUSES.has(s);
}

export interface DeploymentState {
  AutoRevert: boolean;
  AutoPromote: boolean;
  ProgressDeadline: number;
  RequireProgressBy: string | null;
  Promoted: boolean;
  PlacedCanaries: string[] | null;
  DesiredCanaries: number;
  DesiredTotal: number;
  PlacedAllocs: number;
  HealthyAllocs: number;
  UnhealthyAllocs: number;
}

export interface Deployment {
  ID: string;
  Namespace: string;
  JobID: string;
  JobVersion: number;
  JobModifyIndex: number;
  JobSpecModifyIndex: number;
  JobCreateIndex: number;
  IsMultiregion: boolean;
  TaskGroups: Record<string, DeploymentState>;
  Status: DeploymentStatus;
  StatusDescription: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A change of a deployment's status, carried by a plan. */
export interface DeploymentStatusUpdate {
  DeploymentID: string;
  Status: DeploymentStatus;
  StatusDescription: string;
}
