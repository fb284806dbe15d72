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
 *   missing indexes ──► placements at the lowest free index
 */
import type { Allocation, DesiredUpdates, Job, TaskGroup } from '../structs/index.js';
import { IndexAllocator, allocIndex, allocName } from './alloc-name.js';
import { AllocDescription } from './descriptions.js';
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
  inplace: { alloc: Allocation; group: TaskGroup }[];
  delayed: DelayedReschedule[];
  desiredTGUpdates: Record<string, DesiredUpdates>;
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
}

function emptyUpdates(): DesiredUpdates {
  return { Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 };
}

function isClientTerminal(a: Allocation): boolean {
  return a.ClientStatus === 'complete' || a.ClientStatus === 'failed' || a.ClientStatus === 'lost';
}

/** True when an allocation is wanted running and its client has not given up on it. */
export function isLiveAlloc(a: Allocation): boolean {
  return a.DesiredStatus === 'run' && !isClientTerminal(a);
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
  const result: ReconcileResult = { place: [], stop: [], inplace: [], delayed: [], desiredTGUpdates: {} };
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
  if (stopped) {
    for (const g of job?.TaskGroups ?? []) result.desiredTGUpdates[g.Name] ??= emptyUpdates();
    return result;
  }
  for (const group of groups) reconcileGroup(input, job, group, byGroup.get(group.Name) ?? [], result);
  return result;
}

function reconcileGroup(input: ReconcileInput, job: Job, group: TaskGroup, allocs: Allocation[], out: ReconcileResult): void {
  const du = (out.desiredTGUpdates[group.Name] = emptyUpdates());
  const isBatch = job.Type === 'batch';
  const slots: Slot[] = [];
  const replace = (a: Allocation, kind: PlacementKind, delay: number | null): PlacementRequest => ({
    group, name: a.Name, kind, previous: a, rescheduleDelay: delay,
  });

  for (const a of allocs) {
    if (a.DesiredStatus !== 'run') continue;
    const index = allocIndex(a.Name);
    if (isClientTerminal(a)) {
      if (a.NextAllocation !== '') continue; // already replaced
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
      // Failed: the reschedule policy decides.
      const d = rescheduleDecision(a, group.ReschedulePolicy, input.nowMs);
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
  slots.sort((x, y) => x.index - y.index);
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
      out.stop.push({ alloc: a, description: AllocDescription.Updating, clientStatus: null });
      out.place.push({ group, name: a.Name, kind: PlacementKind.Destructive, previous: a, rescheduleDelay: null });
      du.DestructiveUpdate++;
    }
  }

  // Missing indexes: place at the lowest free ones.
  const indexes = new IndexAllocator(remaining.map((s) => s.index).filter((i) => i >= 0));
  for (let n = remaining.length; n < group.Count; n++) {
    out.place.push({ group, name: allocName(job.ID, group.Name, indexes.nextFree()), kind: PlacementKind.New, previous: null, rescheduleDelay: null });
    du.Place++;
  }
}
