/**
 * The reconciler of service and batch jobs: a pure diff between what a job wants (its task
 * groups and counts) and the allocations that exist, taking `now` as input. It decides per
 * task group what to place, stop, update in place or replace; it picks no nodes.
 *
 *   existing allocs ──┬─ desired stop / replaced ───────────────► skipped
 *                     ├─ node down ──► stop (lost) + replacement
 *                     ├─ node draining / migrate ──► stop + replacement
 *                     ├─ failed ──► reschedule now (stop + replacement) | later (follow-up eval) | never
 *                     ├─ batch complete ──► kept (occupies its index)
 *                     └─ live ──► over count? stop highest index │ newer job? in place | destructive
 *   missing indexes ──► placements at the lowest free index, at most maxPlacements in all;
 *                       the rest only counted (deferred) for a follow-up evaluation
 *
 * Groups with an update strategy (max_parallel > 0) roll out through a deployment: destructive
 * updates are limited to max_parallel allocations not yet healthy, and with canaries the new
 * version is placed beside the old one until the deployment is promoted (deployment-rollout.ts).
 */
import type { Allocation, Deployment, DeploymentStatusUpdate, DesiredUpdates, Job, TaskGroup } from '../structs/index.js';
import { isActiveDeployment, isLiveAlloc, isTerminalClientStatus } from '../structs/index.js';
import { IndexAllocator, allocIndex, allocName } from './alloc-name.js';
import { AllocDescription } from './descriptions.js';
import {
  deploymentBaseline,
  destructiveLimit,
  isCurrentVersion,
  isUnpromotedCanary,
  newDeployment,
  newDeploymentState,
  rolloutStrategy,
} from './deployment-rollout.js';
import { RESCHEDULE_WINDOW_MS, rescheduleDecision } from './reschedule.js';
import { tasksUpdated } from './tasks-updated.js';

/** How the node of an existing allocation stands. */
export const NodeTaint = { None: 'none', Lost: 'lost', Draining: 'draining' } as const;
export type NodeTaint = (typeof NodeTaint)[keyof typeof NodeTaint];

/** Why a placement is made. */
export const PlacementKind = {
  New: 'new',
  Lost: 'lost',
  Migrate: 'migrate',
  Reschedule: 'reschedule',
  Destructive: 'destructive',
  Replace: 'replace',
  Canary: 'canary',
} as const;
export type PlacementKind = (typeof PlacementKind)[keyof typeof PlacementKind];

/** One allocation to place; `previous` is the allocation it replaces, if any. */
export interface PlacementRequest {
  group: TaskGroup;
  name: string;
  kind: PlacementKind;
  previous: Allocation | null;
  /** Set when the placement reschedules a failed allocation: the delay that was applied. */
  rescheduleDelay: number | null;
  /** The deployment the new allocation belongs to ('' or absent: none). */
  deploymentId?: string;
  /** True for a canary of the deployment. */
  canary?: boolean;
}

/** One allocation to stop. */
export interface StopRequest {
  alloc: Allocation;
  description: string;
  /** "lost" for allocations on down nodes, else unchanged. */
  clientStatus: 'lost' | null;
}

/** A failed allocation whose reschedule waits until `atMs`: it gets a follow-up eval. */
export interface DelayedReschedule {
  alloc: Allocation;
  atMs: number;
}

/** The reconciler's answer. Stops are listed before the placements that replace them. */
export interface ReconcileResult {
  place: PlacementRequest[];
  stop: StopRequest[];
  /** In-place updates; `deploymentId` moves the allocation into the new version's deployment. */
  inplace: { alloc: Allocation; group: TaskGroup; deploymentId?: string }[];
  delayed: DelayedReschedule[];
  desiredTGUpdates: Record<string, DesiredUpdates>;
  /** A deployment to create or update (group states), if any. */
  deployment: Deployment | null;
  /** Status changes of deployments (older versions cancelled). */
  deploymentUpdates: DeploymentStatusUpdate[];
  /**
   * Per task group: new placements wanted but not listed in `place` because the reconciliation
   * reached `maxPlacements` (counted in desiredTGUpdates' Place all the same). A job's count is
   * a number, not a list: nothing here grows with it.
   */
  deferred: Record<string, number>;
}

/** Inputs of a reconciliation. */
export interface ReconcileInput {
  /** The job as it is now; undefined when deregistered. */
  job: Job | undefined;
  /** Every allocation of the job. */
  allocs: readonly Allocation[];
  /** How the node of an allocation stands. */
  nodeTaint: (nodeId: string) => NodeTaint;
  /** May this allocation stay on its node under the new job (in-place update)? */
  canUpdateInPlace: (alloc: Allocation, group: TaskGroup) => boolean;
  /** The evaluation being processed: a failed alloc whose follow-up is this eval is due now. */
  evalId: string;
  nowMs: number;
  /** The job's latest deployment, if any. */
  deployment?: Deployment;
  /** Source of the ID of a deployment the reconciliation creates. */
  newDeploymentId?: () => string;
  /**
   * The most placements for missing indexes the result lists (default: no limit). Replacements
   * of existing allocations are always listed: there are no more of them than allocations.
   */
  maxPlacements?: number;
}

/** What the groups of one reconciliation share about the job's deployment. */
interface RolloutContext {
  /** The deployment of the current job version still in progress (or failed). */
  current: Deployment | null;
  /** A copy of current with updated group states, when a group changed it. */
  updated: Deployment | null;
  /** A deployment this reconciliation creates. */
  created: Deployment | null;
  succeeded: boolean;
  /** Some allocation of the current job version exists already. */
  hadRunning: boolean;
  newId: () => string;
}

function emptyUpdates(): DesiredUpdates {
  return { Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 };
}


interface Slot {
  index: number;
  /** The allocation occupying the slot (live or kept terminal), if any. */
  alloc: Allocation | null;
  /** A replacement to place for this slot, if any. */
  replacement: PlacementRequest | null;
}

/** Reconciles a job's allocations against its task groups. */
export function reconcile(input: ReconcileInput): ReconcileResult {
  const result: ReconcileResult = { place: [], stop: [], inplace: [], delayed: [], desiredTGUpdates: {}, deployment: null, deploymentUpdates: [], deferred: {} };
  const { job } = input;
  const byGroup = new Map<string, Allocation[]>();
  for (const a of input.allocs) {
    let list = byGroup.get(a.TaskGroup);
    if (!list) byGroup.set(a.TaskGroup, (list = []));
    list.push(a);
  }
  const stopped = !job || job.Stop;
  const groups = stopped ? [] : job.TaskGroups;
  const known = new Set(groups.map((g) => g.Name));

  // Groups that are gone (or a stopped job): everything live is stopped.
  for (const [name, allocs] of byGroup) {
    if (known.has(name)) continue;
    const du = (result.desiredTGUpdates[name] ??= emptyUpdates());
    for (const a of allocs) {
      if (!isLiveAlloc(a)) continue;
      result.stop.push({ alloc: a, description: stopped ? AllocDescription.JobStopped : AllocDescription.NotNeeded, clientStatus: null });
      du.Stop++;
    }
  }
  const base = deploymentBaseline(job, input.deployment);
  result.deploymentUpdates.push(...base.updates);
  if (stopped) {
    for (const g of job?.TaskGroups ?? []) result.desiredTGUpdates[g.Name] ??= emptyUpdates();
    return result;
  }
  const ctx: RolloutContext = {
    current: base.current,
    updated: null,
    created: null,
    succeeded: base.succeeded,
    hadRunning: input.allocs.some((a) => isCurrentVersion(a, job)),
    newId: input.newDeploymentId ?? (() => `deployment-${job.ID}-${job.Version}`),
  };
  for (const group of groups) reconcileGroup(input, job, group, byGroup.get(group.Name) ?? [], result, ctx);
  result.deployment = ctx.created ?? ctx.updated;
  return result;
}

function reconcileGroup(input: ReconcileInput, job: Job, group: TaskGroup, allocs: Allocation[], out: ReconcileResult, ctx: RolloutContext): void {
  const du = (out.desiredTGUpdates[group.Name] = emptyUpdates());
  const firstPlacement = out.place.length;
  const firstInplace = out.inplace.length;
  const strategy = rolloutStrategy(job, group);
  // Unpromoted canaries run beside the allocations they will replace: they take no slot.
  const canaries: Allocation[] = [];
  const isBatch = job.Type === 'batch';
  const slots: Slot[] = [];
  const replace = (a: Allocation, kind: PlacementKind, delay: number | null): PlacementRequest => ({
    group, name: a.Name, kind, previous: a, rescheduleDelay: delay,
  });

  for (const a of allocs) {
    if (a.DesiredStatus !== 'run') continue;
    if (isUnpromotedCanary(a, ctx.current)) {
      // A canary the user stopped goes (a running deployment then places a new one); the
      // canaries of a failed deployment are cancelled, as Nomad's cancelUnneededCanaries.
      const stopped = a.DesiredTransition.Migrate === true;
      if (stopped || ctx.current?.Status === 'failed') {
        if (isLiveAlloc(a)) {
          out.stop.push({ alloc: a, description: stopped ? AllocDescription.Migrating : AllocDescription.NotNeeded, clientStatus: null });
          du.Stop++;
        }
        continue;
      }
      if (isLiveAlloc(a)) canaries.push(a);
      continue;
    }
    const index = allocIndex(a.Name);
    if (isTerminalClientStatus(a.ClientStatus)) {
      if (a.NextAllocation !== '') continue; // already replaced
      // Finished batch work of an older job (a new version, or the same ID purged and registered
      // again) is history, not this job's work: it holds no slot, as Nomad's filterOldTerminalAllocs.
      if (isBatch && isOlderJob(a.Job, job)) continue;
      if (a.ClientStatus === 'complete') {
        // Batch work that finished is done; a service that exits is replaced.
        if (isBatch) slots.push({ index, alloc: a, replacement: null });
        else slots.push({ index, alloc: null, replacement: replace(a, PlacementKind.Replace, null) });
        continue;
      }
      if (a.ClientStatus === 'lost') {
        slots.push({ index, alloc: null, replacement: replace(a, PlacementKind.Lost, null) });
        continue;
      }
      // Failed: the reschedule policy decides, unless `job eval -force-reschedule` marked it.
      const d = a.DesiredTransition.ForceReschedule === true ? { eligible: true, delay: 0, atMs: input.nowMs } : rescheduleDecision(a, group.ReschedulePolicy, input.nowMs);
      if (!d.eligible) {
        slots.push({ index, alloc: a, replacement: null });
      } else if (d.atMs <= input.nowMs + RESCHEDULE_WINDOW_MS || a.FollowupEvalID === input.evalId) {
        out.stop.push({ alloc: a, description: AllocDescription.Rescheduled, clientStatus: null });
        slots.push({ index, alloc: null, replacement: replace(a, PlacementKind.Reschedule, d.delay) });
      } else {
        if (a.FollowupEvalID === '') out.delayed.push({ alloc: a, atMs: d.atMs });
        slots.push({ index, alloc: a, replacement: null });
      }
      continue;
    }
    const taint = input.nodeTaint(a.NodeID);
    if (taint === NodeTaint.Lost) {
      out.stop.push({ alloc: a, description: AllocDescription.Lost, clientStatus: 'lost' });
      slots.push({ index, alloc: null, replacement: replace(a, PlacementKind.Lost, null) });
      du.Stop++;
      continue;
    }
    // On a draining node only what the drainer marked moves: it paces migrations by
    // migrate.max_parallel (src/server/drain), the rest keeps running until its turn.
    if (a.DesiredTransition.Migrate === true) {
      out.stop.push({ alloc: a, description: AllocDescription.Migrating, clientStatus: null });
      slots.push({ index, alloc: null, replacement: replace(a, PlacementKind.Migrate, null) });
      continue;
    }
    slots.push({ index, alloc: a, replacement: null });
  }

  // Over count: drop the highest indexes first (duplicates of an index go first too).
  // For one index, the current job version's allocation is kept (a promoted canary wins over
  // the allocation it replaces).
  const current = (s: Slot): number => (s.alloc && isLiveAlloc(s.alloc) && isCurrentVersion(s.alloc, job) ? 0 : 1);
  slots.sort((x, y) => x.index - y.index || current(x) - current(y));
  const seen = new Set<number>();
  const keep: Slot[] = [];
  const extra: Slot[] = [];
  for (const s of slots) {
    if (s.index >= 0 && !seen.has(s.index)) {
      seen.add(s.index);
      keep.push(s);
    } else extra.push(s);
  }
  while (keep.length + extra.length > group.Count) {
    const s = extra.length > 0 ? extra.pop()! : keep.pop()!;
    if (s.alloc && isLiveAlloc(s.alloc)) {
      out.stop.push({ alloc: s.alloc, description: AllocDescription.NotNeeded, clientStatus: null });
      du.Stop++;
    }
    // A dropped replacement is simply not placed; its stop (if any) stands.
  }
  const remaining = [...keep, ...extra];
  const destructive: Allocation[] = [];

  for (const s of remaining) {
    if (s.replacement) {
      out.place.push(s.replacement);
      if (s.replacement.kind === PlacementKind.Migrate) du.Migrate++;
      else du.Place++;
      continue;
    }
    const a = s.alloc!;
    if (!isLiveAlloc(a) || a.Job === job || a.Job?.JobModifyIndex === job.JobModifyIndex) {
      du.Ignore++;
      continue;
    }
    if (a.Job && !tasksUpdated(a.Job, job, group.Name) && input.canUpdateInPlace(a, group)) {
      out.inplace.push({ alloc: a, group });
      du.InPlaceUpdate++;
    } else {
      destructive.push(a);
    }
  }
  const updatingSpec = destructive.length > 0 || du.InPlaceUpdate > 0;
  const deployment = rolloutDeployment(ctx, job, group, input.nowMs, strategy, updatingSpec);
  const dstate = deployment?.TaskGroups[group.Name];
  const canaryMode = strategy !== null && strategy.Canary > 0 && destructive.length > 0 && dstate?.Promoted !== true && deployment?.Status !== 'failed';
  du.Ignore += canaries.length;
  if (canaryMode) {
    // Canaries first: the old allocations stay until the deployment is promoted.
    du.Ignore += destructive.length;
    if (dstate && dstate.DesiredCanaries !== strategy.Canary) {
      if (deployment === ctx.created) dstate.DesiredCanaries = strategy.Canary;
      else if (ctx.current) {
        ctx.updated ??= { ...ctx.current, TaskGroups: { ...ctx.current.TaskGroups } };
        ctx.updated.TaskGroups[group.Name] = { ...dstate, DesiredCanaries: strategy.Canary };
      }
    }
    const taken = new Set(canaries.map((c) => c.Name));
    const names = destructive.map((a) => a.Name).filter((n) => !taken.has(n));
    for (let n = canaries.length; n < strategy.Canary; n++) {
      const name = names.shift() ?? destructive[n % destructive.length]!.Name;
      out.place.push({ group, name, kind: PlacementKind.Canary, previous: null, rescheduleDelay: null, canary: true });
      du.Canary++;
    }
  } else {
    const liveGroup = allocs.filter(isLiveAlloc);
    const limit = destructiveLimit(strategy, deployment === ctx.created ? null : deployment, liveGroup);
    destructive.forEach((a, i) => {
      if (i >= limit) {
        du.Ignore++;
        return;
      }
      out.stop.push({ alloc: a, description: AllocDescription.Updating, clientStatus: null });
      out.place.push({ group, name: a.Name, kind: PlacementKind.Destructive, previous: a, rescheduleDelay: null });
      du.DestructiveUpdate++;
    });
  }

  // Missing indexes: place at the lowest free ones, as many as the budget allows; the others
  // are counted, never listed (a count of 1e9 must not become 1e9 objects).
  const missing = Math.max(0, group.Count - remaining.length);
  const listed = Math.min(missing, Math.max(0, (input.maxPlacements ?? Infinity) - out.place.length));
  const indexes = new IndexAllocator(remaining.map((s) => s.index).filter((i) => i >= 0));
  for (let n = 0; n < listed; n++) {
    out.place.push({ group, name: allocName(job.ID, group.Name, indexes.nextFree()), kind: PlacementKind.New, previous: null, rescheduleDelay: null });
  }
  du.Place += missing;
  if (missing > listed) out.deferred[group.Name] = missing - listed;
  if (deployment && isActiveDeployment(deployment)) {
    for (const p of out.place.slice(firstPlacement)) p.deploymentId = deployment.ID;
    // Updated in place, an allocation keeps running (and its health) for the new version.
    for (const u of out.inplace.slice(firstInplace)) u.deploymentId = deployment.ID;
  }
}

/**
 * The deployment a group's placements join: the current version's one (its group state
 * added or refreshed in a copy), or a new one when the group has a strategy and there is
 * something to roll out — a first version or a spec change (Nomad's computeGroup).
 */
function rolloutDeployment(
  ctx: RolloutContext,
  job: Job,
  group: TaskGroup,
  nowMs: number,
  strategy: ReturnType<typeof rolloutStrategy>,
  updatingSpec: boolean,
): Deployment | null {
  if (!strategy) return null;
  if (ctx.current) {
    const known = (ctx.updated ?? ctx.current).TaskGroups[group.Name];
    if (known && known.DesiredTotal === group.Count) return ctx.updated ?? ctx.current;
    ctx.updated ??= { ...ctx.current, TaskGroups: { ...ctx.current.TaskGroups } };
    ctx.updated.TaskGroups[group.Name] = known ? { ...known, DesiredTotal: group.Count } : newDeploymentState(group, strategy, nowMs);
    return ctx.updated;
  }
  if (ctx.succeeded || group.Count === 0 || (ctx.hadRunning && !updatingSpec)) return ctx.created;
  ctx.created ??= newDeployment(job, ctx.newId());
  ctx.created.TaskGroups[group.Name] = newDeploymentState(group, strategy, nowMs);
  return ctx.created;
}

/** Whether an allocation was made for an earlier job than `job`: an older version or an earlier registration. */
function isOlderJob(of: Job | null, job: Job): boolean {
  return of !== null && (of.Version < job.Version || of.CreateIndex < job.CreateIndex);
}
