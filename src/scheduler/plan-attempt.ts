/**
 * The submit-and-retry loop shared by every scheduler: compute a plan against a snapshot,
 * submit it, and when the applier committed only part (RefreshIndex > 0) recompute against the
 * fresher snapshot, up to a bounded number of attempts. Then record the outcome on the
 * evaluation: FailedTGAllocs, QueuedAllocations, a blocked eval for what could not be placed and
 * a follow-up eval for what a bounded plan left to place (see MAX_PLACEMENTS_PER_PLAN).
 */
import { generateId, isPlanEmpty, type AllocMetric, type Evaluation, type Plan } from '../structs/index.js';
import type { Planner, SchedulerContext, SchedulerState } from './interfaces.js';
import { buildBlockedEval, buildContinuationEval } from './eval-builder.js';

/** What one computation of a plan produced. */
export interface PlanAttempt {
  plan: Plan;
  /** Per task group: why the placements that failed could not be made. */
  failedTGAllocs: Record<string, AllocMetric>;
  /** Per task group: allocations left unplaced. */
  queued: Record<string, number>;
  /** Follow-up evaluations to create before submitting the plan. */
  followups: Evaluation[];
  /** Node classes seen feasible (true) or not (false), for the blocked eval. */
  classEligibility: Record<string, boolean>;
  /**
   * Placements that could succeed but were left out to keep the plan bounded: a follow-up
   * evaluation places them once this plan is committed. Counted in `queued` too.
   */
  deferred: number;
}

/**
 * The most new allocations one evaluation places by default. A job's count may ask for far more
 * (job_max_count is 50,000 by default, and jobs stored before a limit was lowered keep theirs):
 * each evaluation places a bounded batch and hands the rest to a follow-up, so the scheduler's
 * memory and the size of one plan (one log entry) stay bounded whatever the count.
 */
export const MAX_PLACEMENTS_PER_PLAN = 2_000;

/** Computes a plan for the evaluation against a snapshot (a long one yields to the event loop: loop-slice.ts). */
export type PlanComputer = (evaluation: Evaluation, state: SchedulerState) => PlanAttempt | Promise<PlanAttempt>;

/** Runs the attempts and finishes the evaluation. Resolves when the eval is updated. */
export async function runPlanAttempts(
  evaluation: Evaluation,
  initial: SchedulerState,
  planner: Planner,
  ctx: SchedulerContext,
  maxAttempts: number,
  compute: PlanComputer,
): Promise<void> {
  const newId = ctx.newId ?? generateId;
  let state = initial;
  let last: PlanAttempt | null = null;
  let done = false;
  for (let attempt = 0; attempt < maxAttempts && !done; attempt++) {
    last = await compute(evaluation, state);
    last.plan.SnapshotIndex = state.index();
    for (const f of last.followups) await planner.createEval(f);
    // A plan dry run (`job plan`) wants the annotations even when nothing would change.
    if (isPlanEmpty(last.plan) && !evaluation.AnnotatePlan) {
      done = true;
      break;
    }
    const { result, newState } = await planner.submitPlan(last.plan);
    if (result.RefreshIndex > 0 && newState) {
      state = newState;
      continue;
    }
    done = true;
  }
  const update: Evaluation = { ...evaluation, ModifyTime: ctx.now * 1_000_000 };
  if (!done || !last) {
    update.Status = 'failed';
    update.StatusDescription = `maximum attempts reached (${maxAttempts})`;
    await planner.updateEval(update);
    return;
  }
  const failed = Object.keys(last.failedTGAllocs).length > 0;
  update.Status = 'complete';
  update.StatusDescription = '';
  update.FailedTGAllocs = failed ? last.failedTGAllocs : null;
  update.QueuedAllocations = last.queued;
  // As Nomad's setStatus: the evaluation names the deployment it ran in (what `job run`,
  // `job scale` and `job revert` follow after it).
  if (last.plan.Deployment) update.DeploymentID = last.plan.Deployment.ID;
  if (failed) {
    const blocked = buildBlockedEval(evaluation, newId(), ctx.now, last.classEligibility);
    await planner.reblockEval(blocked);
    update.BlockedEval = blocked.ID;
  }
  if (last.deferred > 0) {
    // Created after the plan is committed: the broker runs it once this eval is acked, against
    // a state that holds this batch, and it places the next one.
    const next = buildContinuationEval(evaluation, newId(), ctx.now);
    await planner.createEval(next);
    update.NextEval = next.ID;
  }
  await planner.updateEval(update);
}
