/**
 * The scheduler of system and sysbatch jobs: one allocation of each task group on every
 * ready node that is feasible for it. It follows the nodes: a new node gets a placement, a
 * down node's allocations are lost (and not replaced elsewhere), an ineligible or draining
 * node gets no new placements. Sysbatch allocations that completed are not run again for the
 * same job version.
 */
import {
  emptyPlan,
  generateId,
  type Allocation,
  type DesiredUpdates,
  type Evaluation,
  type Job,
  type Node,
  type TaskGroup,
} from '../structs/index.js';
import type { Planner, Scheduler, SchedulerContext, SchedulerState } from './interfaces.js';
import { allocName } from './alloc-name.js';
import { buildInPlaceAlloc, buildNewAlloc, buildStoppedAlloc } from './alloc-builder.js';
import { AllocDescription } from './descriptions.js';
import { nodeInJobScope, nodeIsReady } from './feasibility.js';
import { ProposedUsage } from './node-usage.js';
import { PlacementStack } from './placement-stack.js';
import { runPlanAttempts, type PlanAttempt } from './plan-attempt.js';
import { isLiveAlloc } from '../structs/alloc.js';
import { isNodeUnreachable } from '../structs/node.js';
import { tasksUpdated } from './tasks-updated.js';
import { LoopSlice } from './loop-slice.js';
import { rememberSettledWalk, walkScope } from './settled-walk.js';

/** Plan attempts before giving up, as Nomad's system scheduler. */
export const MAX_SYSTEM_ATTEMPTS = 5;

function emptyUpdates(): DesiredUpdates {
  return { Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 };
}

function pushTo(rec: Record<string, Allocation[]>, nodeId: string, a: Allocation): void {
  (rec[nodeId] ??= []).push(a);
}

function isCurrent(a: Allocation, job: Job): boolean {
  return a.Job === job || a.Job?.JobModifyIndex === job.JobModifyIndex;
}

/** Schedules one evaluation of a system or sysbatch job. */
export class SystemScheduler implements Scheduler {
  private readonly newId: () => string;

  constructor(
    private readonly state: SchedulerState,
    private readonly planner: Planner,
    private readonly ctx: SchedulerContext,
    private readonly sysbatch: boolean,
  ) {
    this.newId = ctx.newId ?? generateId;
  }

  async process(evaluation: Evaluation): Promise<void> {
    await runPlanAttempts(evaluation, this.state, this.planner, this.ctx, MAX_SYSTEM_ATTEMPTS, (ev, st) => this.computePlan(ev, st));
  }

  /** Async only to yield: a 10,000-node evaluation gives the event loop a turn every slice (loop-slice.ts). */
  private async computePlan(ev: Evaluation, state: SchedulerState): Promise<PlanAttempt> {
    const nowMs = this.ctx.now;
    const slice = new LoopSlice(this.ctx.sliceMs);
    const job = state.jobById(ev.Namespace, ev.JobID);
    const allocs = state.allocsByJob(ev.Namespace, ev.JobID);
    const plan = emptyPlan(ev.ID, '', job?.Priority ?? ev.Priority, job ?? null);
    const attempt: PlanAttempt = { plan, failedTGAllocs: {}, queued: {}, followups: [], classEligibility: {}, deferred: 0 };
    const du: Record<string, DesiredUpdates> = {};
    plan.Annotations = { DesiredTGUpdates: du };
    const updatesFor = (g: string) => (du[g] ??= emptyUpdates());
    const stop = (a: Allocation, description: string, lost = false) => {
      pushTo(plan.NodeUpdate, a.NodeID, buildStoppedAlloc(a, description, lost ? 'lost' : null, nowMs));
      updatesFor(a.TaskGroup).Stop++;
    };

    if (!job || job.Stop) {
      for (const a of allocs) if (isLiveAlloc(a)) stop(a, AllocDescription.JobStopped);
      return attempt;
    }

    // The candidates, and for a node's update on a settled job the only nodes whose answer can
    // change (settled-walk.ts): the others are skipped, in the same order, so the plan is the same.
    const scope = walkScope(ev, state, job, allocs);
    const only = scope.only;

    // Allocations by node and group.
    const byNode = new Map<string, Map<string, Allocation[]>>();
    for (const a of allocs) {
      if (only && !only.has(a.NodeID)) continue;
      let m = byNode.get(a.NodeID);
      if (!m) byNode.set(a.NodeID, (m = new Map()));
      const list = m.get(a.TaskGroup) ?? [];
      list.push(a);
      m.set(a.TaskGroup, list);
    }
    const groups = new Map(job.TaskGroups.map((g) => [g.Name, g] as const));
    for (const g of job.TaskGroups) {
      updatesFor(g.Name);
      attempt.queued[g.Name] = 0;
    }

    const nodes: Node[] = scope.ready;
    // A restricted walk places only on its own nodes: they are the stack's candidates, and only
    // their allocations count (anti-affinity; no spread or distinct_* reads the others:
    // settled-walk.ts walks those jobs in full). The metrics count the whole pool, and the random
    // source advances as the full walk's shuffle would, so the draws after it (ports) are the same.
    const usage = new ProposedUsage(state);
    const stack = only
      ? new PlacementStack(job, nodes.filter((n) => only.has(n.ID)), usage, state, this.ctx.random, allocs.filter((a) => only.has(a.NodeID)), {
          nodesAvailable: scope.nodesAvailable,
          size: nodes.length,
        })
      : new PlacementStack(job, nodes.slice(), usage, state, this.ctx.random, allocs);

    // Existing allocations on nodes that are gone, down, out of scope or of removed groups.
    const toPlace: { node: Node; group: TaskGroup; previous: Allocation | null }[] = [];
    for (const [nodeId, m] of byNode) {
      const y = slice.maybeYield();
      if (y) await y;
      const node = state.nodeById(nodeId);
      const lost = !node || isNodeUnreachable(node.Status);
      for (const [groupName, list] of m) {
        const group = groups.get(groupName);
        const live = list.filter(isLiveAlloc);
        if (lost) {
          for (const a of live) stop(a, AllocDescription.Lost, true);
          continue;
        }
        if (!group || !nodeInJobScope(job, node)) {
          for (const a of live) stop(a, AllocDescription.NotNeeded);
          continue;
        }
        // In scope: one of the candidates exactly when it is ready.
        if (!nodeIsReady(node)) {
          // Ineligible or draining: keep what runs, place nothing new — except what the
          // drainer marked for migration, which a system job can only stop.
          for (const a of live) {
            if (a.DesiredTransition.Migrate === true) stop(a, AllocDescription.NodeTainted);
            else updatesFor(groupName).Ignore++;
          }
          continue;
        }
        if (!stack.staticallyFeasible(group, node)) {
          for (const a of live) stop(a, AllocDescription.NotFeasible);
          continue;
        }
        // Extra copies on one node are stopped.
        for (const a of live.slice(1)) stop(a, AllocDescription.NotNeeded);
        const a = live[0];
        if (a) {
          if (isCurrent(a, job)) updatesFor(groupName).Ignore++;
          else if (a.Job && !tasksUpdated(a.Job, job, groupName)) {
            pushTo(plan.NodeAllocation, nodeId, buildInPlaceAlloc(a, job, ev, nowMs));
            updatesFor(groupName).InPlaceUpdate++;
          } else {
            pushTo(plan.NodeUpdate, nodeId, buildStoppedAlloc(a, AllocDescription.Updating, null, nowMs));
            stack.recordStop(a);
            toPlace.push({ node, group, previous: a });
            updatesFor(groupName).DestructiveUpdate++;
          }
        }
      }
    }

    // Ready nodes without a live allocation of a group get one (sysbatch: unless it completed).
    for (const node of nodes) {
      if (only && !only.has(node.ID)) continue;
      const y = slice.maybeYield();
      if (y) await y;
      const m = byNode.get(node.ID);
      for (const group of job.TaskGroups) {
        const list = m?.get(group.Name) ?? [];
        if (list.some(isLiveAlloc)) continue;
        if (this.sysbatch && list.some((a) => a.ClientStatus === 'complete' && isCurrent(a, job))) {
          updatesFor(group.Name).Ignore++;
          continue;
        }
        if (!stack.staticallyFeasible(group, node)) continue;
        toPlace.push({ node, group, previous: list.find((a) => a.NextAllocation === '' && !isLiveAlloc(a)) ?? null });
        updatesFor(group.Name).Place++;
      }
    }

    // Nodes this walk leaves work on (its plan's, its failed placements'): the next walk looks at them again.
    const unsettled = new Set<string>();
    for (const p of toPlace) {
      const y = slice.maybeYield();
      if (y) await y;
      const { selection, metric } = stack.selectOnNode(p.group, p.node);
      if (!selection) {
        const prior = attempt.failedTGAllocs[p.group.Name];
        if (prior) prior.CoalescedFailures++;
        else attempt.failedTGAllocs[p.group.Name] = metric;
        attempt.queued[p.group.Name] = (attempt.queued[p.group.Name] ?? 0) + 1;
        if (p.node.NodeClass) attempt.classEligibility[p.node.NodeClass] = false;
        unsettled.add(p.node.ID);
        continue;
      }
      const alloc = buildNewAlloc({
        id: this.newId(),
        evaluation: ev,
        job,
        group: p.group,
        name: allocName(job.ID, p.group.Name, 0),
        node: p.node,
        ask: selection.ask,
        ports: selection.ports,
        metric,
        nowMs,
        previous: p.previous,
        tracker: null,
        memoryOversubscription: stack.memoryOversubscription,
      });
      pushTo(plan.NodeAllocation, p.node.ID, alloc);
      stack.recordPlacement(p.node, p.group, selection);
    }
    for (const id of Object.keys(plan.NodeUpdate)) unsettled.add(id);
    for (const id of Object.keys(plan.NodeAllocation)) unsettled.add(id);
    rememberSettledWalk(ev, state, job, { nodeCount: scope.nodeCount, allocCount: allocs.length }, unsettled);
    return attempt;
  }
}
