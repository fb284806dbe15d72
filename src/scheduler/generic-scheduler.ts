/**
 * The generic scheduler for service and batch jobs: reconciles the job's allocations, then
 * places what is missing through the placement stack and submits one plan per attempt. One
 * evaluation places at most maxPlacementsPerPlan new allocations; a follow-up places the rest.
 */
import { emptyPlan, generateId, type AllocMetric, type Allocation, type Evaluation, type Job, type Plan, isNodeUnreachable } from '../structs/index.js';
import type { Planner, Scheduler, SchedulerContext, SchedulerState } from './interfaces.js';
import { buildInPlaceAlloc, buildNewAlloc, buildStoppedAlloc } from './alloc-builder.js';
import { buildFollowupEval } from './eval-builder.js';
import { ProposedUsage } from './node-usage.js';
import { PlacementStack } from './placement-stack.js';
import { candidateSetFor, scopedCandidates } from './candidate-set.js';
import { MAX_PLACEMENTS_PER_PLAN, runPlanAttempts, type PlanAttempt } from './plan-attempt.js';
import { NodeTaint, PlacementKind, reconcile, type ReconcileResult } from './reconciler.js';
import { nextTracker } from './reschedule.js';
import { LoopSlice } from './loop-slice.js';

/** Plan attempts before giving up, as Nomad: 5 for services, 2 for batch. */
export const MAX_SERVICE_ATTEMPTS = 5;
export const MAX_BATCH_ATTEMPTS = 2;

function pushTo(rec: Record<string, Allocation[]>, nodeId: string, a: Allocation): void {
  (rec[nodeId] ??= []).push(a);
}

/** Schedules one evaluation of a service or batch job. */
export class GenericScheduler implements Scheduler {
  private readonly newId: () => string;

  constructor(
    private readonly state: SchedulerState,
    private readonly planner: Planner,
    private readonly ctx: SchedulerContext,
    private readonly batch: boolean,
  ) {
    this.newId = ctx.newId ?? generateId;
  }

  async process(evaluation: Evaluation): Promise<void> {
    const attempts = this.batch ? MAX_BATCH_ATTEMPTS : MAX_SERVICE_ATTEMPTS;
    await runPlanAttempts(evaluation, this.state, this.planner, this.ctx, attempts, (ev, st) => this.computePlan(ev, st));
  }

  /** Async only to yield: a plan of thousands of placements gives the event loop a turn every slice (loop-slice.ts). */
  private async computePlan(ev: Evaluation, state: SchedulerState): Promise<PlanAttempt> {
    const nowMs = this.ctx.now;
    const job = state.jobById(ev.Namespace, ev.JobID);
    const allocs = state.allocsByJob(ev.Namespace, ev.JobID);
    const plan: Plan = emptyPlan(ev.ID, '', job?.Priority ?? ev.Priority, job ?? null);
    const attempt: PlanAttempt = { plan, failedTGAllocs: {}, queued: {}, followups: [], classEligibility: {}, deferred: 0 };

    const taints = new Map<string, NodeTaint>();
    const nodeTaint = (nodeId: string): NodeTaint => {
      let t = taints.get(nodeId);
      if (t === undefined) {
        const n = state.nodeById(nodeId);
        if (!n || isNodeUnreachable(n.Status)) t = NodeTaint.Lost;
        else if (n.DrainStrategy !== null || n.Drain) t = NodeTaint.Draining;
        else t = NodeTaint.None;
        taints.set(nodeId, t);
      }
      return t;
    };

    let stack: PlacementStack | null = null;
    const getStack = (): PlacementStack => {
      if (!stack) {
        const candidates = job ? (candidateSetFor(state, job, this.ctx.random) ?? scopedCandidates(state, job)) : [];
        stack = new PlacementStack(job!, candidates, new ProposedUsage(state), state, this.ctx.random, allocs);
      }
      return stack;
    };

    const result = reconcile({
      job,
      allocs,
      nodeTaint,
      evalId: ev.ID,
      nowMs,
      deployment: job ? state.latestDeploymentByJob(ev.Namespace, ev.JobID) : undefined,
      newDeploymentId: this.newId,
      canUpdateInPlace: (a, group) => {
        const node = state.nodeById(a.NodeID);
        return node !== undefined && getStack().staticallyFeasible(group, node);
      },
      maxPlacements: Math.max(1, this.ctx.maxPlacementsPerPlan ?? MAX_PLACEMENTS_PER_PLAN),
    });
    plan.Annotations = { DesiredTGUpdates: result.desiredTGUpdates };
    plan.Deployment = result.deployment;
    plan.DeploymentUpdates = result.deploymentUpdates;

    const stoppedCopies = new Map<string, Allocation>();
    for (const s of result.stop) {
      const copy = buildStoppedAlloc(s.alloc, s.description, s.clientStatus, nowMs);
      pushTo(plan.NodeUpdate, s.alloc.NodeID, copy);
      stoppedCopies.set(s.alloc.ID, copy);
    }
    if (job && !job.Stop) {
      for (const u of result.inplace) {
        const updated = buildInPlaceAlloc(u.alloc, job, ev, nowMs);
        if (u.deploymentId) updated.DeploymentID = u.deploymentId;
        pushTo(plan.NodeAllocation, u.alloc.NodeID, updated);
      }
    }

    // Delayed reschedules: one follow-up eval per distinct time, and the failed allocs point to it.
    const byTime = new Map<number, Evaluation>();
    for (const d of result.delayed) {
      let f = byTime.get(d.atMs);
      if (!f) {
        f = buildFollowupEval(ev, this.newId(), nowMs, d.atMs);
        byTime.set(d.atMs, f);
        attempt.followups.push(f);
      }
      pushTo(plan.NodeAllocation, d.alloc.NodeID, { ...d.alloc, FollowupEvalID: f.ID });
    }

    for (const g of job?.TaskGroups ?? []) attempt.queued[g.Name] = 0;
    if (result.place.length === 0 || !job) return attempt;
    await this.placeAll(result, job, ev, plan, attempt, stoppedCopies, getStack());
    return attempt;
  }

  /**
   * Places the reconciler's placements, then accounts for those it only counted: a group that
   * failed cannot place them either (coalesced failures, queued for the blocked eval); the
   * others wait for the follow-up evaluation (`deferred`).
   */
  private async placeAll(result: ReconcileResult, job: Job, ev: Evaluation, plan: Plan, attempt: PlanAttempt, stoppedCopies: Map<string, Allocation>, st: PlacementStack): Promise<void> {
    const nowMs = this.ctx.now;
    const slice = new LoopSlice(this.ctx.sliceMs);
    for (const s of result.stop) st.recordStop(s.alloc);
    const failedGroups = new Set<string>();
    for (const p of result.place) {
      const y = slice.maybeYield();
      if (y) await y;
      const groupName = p.group.Name;
      if (failedGroups.has(groupName)) {
        // Nomad coalesces: once a group fails, its other placements would fail the same way.
        attempt.failedTGAllocs[groupName]!.CoalescedFailures++;
        attempt.queued[groupName] = (attempt.queued[groupName] ?? 0) + 1;
        continue;
      }
      const penalty = p.kind === PlacementKind.Reschedule && p.previous ? new Set([p.previous.NodeID]) : undefined;
      const { selection, metric } = st.select(p.group, { allocName: p.name, ...(penalty ? { penaltyNodeIds: penalty } : {}) });
      if (!selection) {
        failedGroups.add(groupName);
        attempt.failedTGAllocs[groupName] = metric as AllocMetric;
        attempt.queued[groupName] = (attempt.queued[groupName] ?? 0) + 1;
        for (const cls of Object.keys(metric.ClassFiltered ?? {})) attempt.classEligibility[cls] ??= false;
        continue;
      }
      if (selection.node.NodeClass) attempt.classEligibility[selection.node.NodeClass] = true;
      const tracker = p.kind === PlacementKind.Reschedule && p.previous ? nextTracker(p.previous, nowMs, p.rescheduleDelay ?? 0) : p.previous?.RescheduleTracker ?? null;
      const alloc = buildNewAlloc({
        id: this.newId(),
        evaluation: ev,
        job,
        group: p.group,
        name: p.name,
        node: selection.node,
        ask: selection.ask,
        ports: selection.ports,
        metric,
        nowMs,
        previous: p.previous,
        tracker,
        deploymentId: p.deploymentId,
        canary: p.canary,
        memoryOversubscription: st.memoryOversubscription,
      });
      pushTo(plan.NodeAllocation, selection.node.ID, alloc);
      st.recordPlacement(selection.node, p.group, selection);
      if (p.previous) {
        const copy = stoppedCopies.get(p.previous.ID);
        if (copy) copy.NextAllocation = alloc.ID;
        else {
          const marked = { ...buildStoppedAlloc(p.previous, p.previous.DesiredDescription, null, nowMs), NextAllocation: alloc.ID };
          pushTo(plan.NodeUpdate, p.previous.NodeID, marked);
        }
      }
    }
    for (const [groupName, n] of Object.entries(result.deferred)) {
      attempt.queued[groupName] = (attempt.queued[groupName] ?? 0) + n;
      if (failedGroups.has(groupName)) attempt.failedTGAllocs[groupName]!.CoalescedFailures += n;
      else attempt.deferred += n;
    }
  }
}
