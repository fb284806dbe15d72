/**
 * `job plan`: runs the job's scheduler against a snapshot in which the submitted job replaces
 * the registered one, with a planner that records the plan instead of committing it.
 */
import type { Allocation, Deployment, Evaluation, Job, Node, Plan, PlanResult } from '../structs/index.js';
import type { Planner, SchedulerFactory, SchedulerState } from '../scheduler/interfaces.js';
import type { JobPlanResult } from './server-api.js';
import type { HostVolume } from '../structs/dynamic-host-volume.js';
import { annotateJobDiff, diffJob } from '../structs/job-diff/index.js';

/** A snapshot view where one job is replaced by a candidate version. */
class CandidateState implements SchedulerState {
  constructor(
    private readonly base: SchedulerState,
    private readonly job: Job,
  ) {}
  index(): number {
    return this.base.index();
  }
  jobById(namespace: string, id: string): Job | undefined {
    if (namespace === this.job.Namespace && id === this.job.ID) return this.job;
    return this.base.jobById(namespace, id);
  }
  nodes(): Iterable<Node> {
    return this.base.nodes();
  }
  nodeById(id: string): Node | undefined {
    return this.base.nodeById(id);
  }
  allocById(id: string): Allocation | undefined {
    return this.base.allocById(id);
  }
  allocsByJob(namespace: string, jobId: string): Allocation[] {
    return this.base.allocsByJob(namespace, jobId);
  }
  allocsByNode(nodeId: string): Allocation[] {
    return this.base.allocsByNode(nodeId);
  }
  latestDeploymentByJob(namespace: string, jobId: string): Deployment | undefined {
    return this.base.latestDeploymentByJob(namespace, jobId);
  }
  evalById(id: string): Evaluation | undefined {
    return this.base.evalById(id);
  }
  hostVolumeById(id: string): HostVolume | undefined {
    return this.base.hostVolumeById?.(id);
  }
}

/** Records what a scheduler would do. */
class RecordingPlanner implements Planner {
  plan: Plan | null = null;
  evaluation: Evaluation | null = null;

  async submitPlan(plan: Plan): Promise<{ result: PlanResult; newState: SchedulerState | null }> {
    this.plan = plan;
    const result: PlanResult = {
      NodeUpdate: plan.NodeUpdate,
      NodeAllocation: plan.NodeAllocation,
      NodePreemptions: plan.NodePreemptions,
      Deployment: plan.Deployment,
      DeploymentUpdates: plan.DeploymentUpdates,
      RefreshIndex: 0,
      AllocIndex: 0,
    };
    return { result, newState: null };
  }
  async updateEval(e: Evaluation): Promise<void> {
    this.evaluation = e;
  }
  async createEval(_e: Evaluation): Promise<void> {}
  async reblockEval(e: Evaluation): Promise<void> {
    this.evaluation = e;
  }
}

export interface DryRunInput {
  snapshot: SchedulerState;
  candidate: Job;
  existing: Job | undefined;
  evaluation: Evaluation;
  factory: SchedulerFactory;
  now: number;
  random: () => number;
}

/** Runs the scheduler on the candidate job and reports the plan and its annotations. */
export async function dryRunPlan(input: DryRunInput): Promise<JobPlanResult> {
  const planner = new RecordingPlanner();
  const state = new CandidateState(input.snapshot, input.candidate);
  const sched = input.factory(state, planner, { now: input.now, random: input.random });
  await sched.process(input.evaluation);
  const plan = planner.plan;
  const annotations = plan?.Annotations?.DesiredTGUpdates ?? {};
  const diff = diffJob(input.existing, input.candidate, true);
  annotateJobDiff(diff, annotations);
  return {
    annotations,
    failedTGAllocs: planner.evaluation?.FailedTGAllocs ?? null,
    plan,
    jobModifyIndex: input.existing?.JobModifyIndex ?? 0,
    index: input.snapshot.index(),
    diff,
  };
}
