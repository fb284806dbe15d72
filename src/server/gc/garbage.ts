/**
 * Leader garbage collection (a small version of Nomad's core scheduler GC): terminal
 * evaluations older than a threshold, with their terminal allocations, are removed when their
 * job is dead, stopped or gone — keeping the state (and snapshots) from growing forever.
 */
import { isTerminalEvalStatus } from '../../structs/index.js';
import type { StateStore } from '../state/state-store.js';
import { isTerminalAlloc } from '../../structs/alloc.js';

/** What to delete. */
export interface Garbage {
  evalIds: string[];
  allocIds: string[];
}

/** Finds terminal evals older than `thresholdNanos` at `nowNanos` whose allocs are all terminal. */
export function findGarbage(state: StateStore, nowNanos: number, thresholdNanos: number): Garbage {
  const evalIds: string[] = [];
  const allocIds: string[] = [];
  const allocsByEval = new Map<string, string[]>();
  for (const a of state.allocs()) {
    const list = allocsByEval.get(a.EvalID) ?? [];
    list.push(a.ID);
    allocsByEval.set(a.EvalID, list);
  }
  for (const e of state.evals()) {
    if (!isTerminalEvalStatus(e.Status) || nowNanos - e.ModifyTime < thresholdNanos) continue;
    const job = state.jobById(e.Namespace, e.JobID);
    if (job && !job.Stop && job.Status !== 'dead') continue;
    const allocs = (allocsByEval.get(e.ID) ?? []).map((id) => state.allocById(id)!);
    if (!allocs.every(isTerminalAlloc)) continue;
    evalIds.push(e.ID);
    for (const a of allocs) allocIds.push(a.ID);
  }
  return { evalIds, allocIds };
}
