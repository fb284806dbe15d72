/**
 * Reschedule decisions for failed allocations: whether a reschedule policy still allows one
 * more attempt, the delay before it (constant, exponential or fibonacci, capped at MaxDelay)
 * and the tracker the replacement carries. Pure: "now" is an argument.
 */
import { NANOS_PER_MS, type Allocation, type ReschedulePolicy, type RescheduleTracker } from '../structs/index.js';

/** Allocations failing within this window of their reschedule time are replaced at once (Nomad: 1 s). */
export const RESCHEDULE_WINDOW_MS = 1000;

/** The decision for one failed allocation. */
export interface RescheduleDecision {
  /** False when the policy forbids another attempt. */
  eligible: boolean;
  /** The delay applied, in nanoseconds. */
  delay: number;
  /** When the replacement may be placed, in ms since the epoch. */
  atMs: number;
}

/** The delay before the next reschedule, given the attempts already made. */
export function nextRescheduleDelay(policy: ReschedulePolicy, tracker: RescheduleTracker | null): number {
  const events = tracker?.Events ?? [];
  const base = policy.Delay;
  const cap = policy.MaxDelay > 0 ? policy.MaxDelay : Number.POSITIVE_INFINITY;
  let delay: number;
  switch (policy.DelayFunction) {
    case 'constant':
      delay = base;
      break;
    case 'exponential': {
      const last = events[events.length - 1];
      delay = last ? Math.max(last.Delay, base) * 2 : base;
      break;
    }
    case 'fibonacci': {
      const n = events.length;
      if (n < 2) delay = base;
      else delay = events[n - 1]!.Delay + events[n - 2]!.Delay;
      break;
    }
    default: {
      const never: never = policy.DelayFunction;
      void never;
      delay = base;
    }
  }
  return Math.min(delay, cap);
}

/** When the allocation failed: its last task's finish, else its last modification. In ms. */
export function failTimeMs(alloc: Allocation): number {
  let latest = 0;
  for (const ts of Object.values(alloc.TaskStates ?? {})) {
    if (ts.FinishedAt) {
      const t = Date.parse(ts.FinishedAt);
      if (!Number.isNaN(t) && t > latest) latest = t;
    }
  }
  return latest > 0 ? latest : Math.floor(alloc.ModifyTime / NANOS_PER_MS);
}

/** Counts the attempts within the policy's interval and decides on the next one. */
export function rescheduleDecision(alloc: Allocation, policy: ReschedulePolicy | null, nowMs: number): RescheduleDecision {
  if (!policy || (!policy.Unlimited && policy.Attempts <= 0)) return { eligible: false, delay: 0, atMs: 0 };
  if (!policy.Unlimited) {
    const windowStartNs = (nowMs - policy.Interval / NANOS_PER_MS) * NANOS_PER_MS;
    const recent = (alloc.RescheduleTracker?.Events ?? []).filter((e) => e.RescheduleTime > windowStartNs).length;
    if (recent >= policy.Attempts) return { eligible: false, delay: 0, atMs: 0 };
  }
  const delay = nextRescheduleDelay(policy, alloc.RescheduleTracker);
  return { eligible: true, delay, atMs: failTimeMs(alloc) + delay / NANOS_PER_MS };
}

/** The tracker a replacement carries: the failed alloc's history plus this reschedule. */
export function nextTracker(prev: Allocation, nowMs: number, delay: number): RescheduleTracker {
  return {
    Events: [
      ...(prev.RescheduleTracker?.Events ?? []),
      { RescheduleTime: nowMs * NANOS_PER_MS, PrevAllocID: prev.ID, PrevNodeID: prev.NodeID, Delay: delay },
    ],
  };
}
