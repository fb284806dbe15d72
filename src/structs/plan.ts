/**
 * Plans: what a scheduler proposes (stops, placements, updates), and what the plan applier
 * committed.
 */
import type { Allocation } from './alloc.js';
import type { Deployment, DeploymentStatusUpdate } from './deployment.js';
import type { Job } from './job.js';

/** A scheduler's proposal for one evaluation. */
export interface Plan {
  EvalID: string;
  EvalToken: string;
  Priority: number;
  AllAtOnce: boolean;
  Job: Job | null;
  /** Allocations to stop or otherwise update without a new placement, by node ID. */
  NodeUpdate: Record<string, Allocation[]>;
  /** New allocations and in-place updates, by node ID. */
  NodeAllocation: Record<string, Allocation[]>;
  NodePreemptions: Record<string, Allocation[]>;
  Deployment: Deployment | null;
  DeploymentUpdates: DeploymentStatusUpdate[];
  Annotations: PlanAnnotations | null;
  SnapshotIndex: number;
}

/** What the plan applier committed of a plan. RefreshIndex > 0 means part was dropped. */
export interface PlanResult {
  NodeUpdate: Record<string, Allocation[]>;
  NodeAllocation: Record<string, Allocation[]>;
  NodePreemptions: Record<string, Allocation[]>;
  Deployment: Deployment | null;
  DeploymentUpdates: DeploymentStatusUpdate[];
  RefreshIndex: number;
  AllocIndex: number;
}

/** Dry-run annotations for `job plan`. */
export interface PlanAnnotations {
  DesiredTGUpdates: Record<string, DesiredUpdates>;
}

/** Per task group counts of what a plan would do. */
export interface DesiredUpdates {
  Ignore: number;
  Place: number;
  Migrate: number;
  Stop: number;
  InPlaceUpdate: number;
  DestructiveUpdate: number;
  Canary: number;
  Preemptions: number;
}

/** A plan with nothing in it. */
export function emptyPlan(evalId: string, token: string, priority: number, job: Job | null): Plan {
  return {
    EvalID: evalId,
    EvalToken: token,
    Priority: priority,
    AllAtOnce: job?.AllAtOnce ?? false,
    Job: job,
    NodeUpdate: {},
    NodeAllocation: {},
    NodePreemptions: {},
    Deployment: null,
    DeploymentUpdates: [],
    Annotations: null,
    SnapshotIndex: 0,
  };
}

/** True when a plan changes nothing. */
export function isPlanEmpty(p: Plan): boolean {
  return (
    Object.keys(p.NodeUpdate).length === 0 &&
    Object.keys(p.NodeAllocation).length === 0 &&
    Object.keys(p.NodePreemptions).length === 0 &&
    p.Deployment === null &&
    p.DeploymentUpdates.length === 0
  );
}
