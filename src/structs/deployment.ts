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
