/** Builds the evaluations a scheduler creates: blocked evals, delayed follow-ups and continuations. */
import { NANOS_PER_MS, type Evaluation } from '../structs/index.js';
import { BLOCKED_EVAL_DESCRIPTION, CONTINUATION_EVAL_DESCRIPTION, FOLLOWUP_EVAL_DESCRIPTION } from './descriptions.js';

function derived(parent: Evaluation, id: string, nowMs: number): Evaluation {
  return {
    ...parent,
    ID: id,
    PreviousEval: parent.ID,
    NextEval: '',
    BlockedEval: '',
    FailedTGAllocs: null,
    QueuedAllocations: null,
    ClassEligibility: null,
    EscapedComputedClass: false,
    AnnotatePlan: false,
    Wait: 0,
    WaitUntil: null,
    SnapshotIndex: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    CreateTime: nowMs * NANOS_PER_MS,
    ModifyTime: nowMs * NANOS_PER_MS,
  };
}

/** A blocked evaluation that waits for capacity to place what `parent` could not. */
export function buildBlockedEval(parent: Evaluation, id: string, nowMs: number, classEligibility: Record<string, boolean> | null): Evaluation {
  return {
    ...derived(parent, id, nowMs),
    Status: 'blocked',
    StatusDescription: BLOCKED_EVAL_DESCRIPTION,
    ClassEligibility: classEligibility,
  };
}

/** A pending evaluation not to be processed before `atMs`, to reschedule failed allocations. */
export function buildFollowupEval(parent: Evaluation, id: string, nowMs: number, atMs: number): Evaluation {
  return {
    ...derived(parent, id, nowMs),
    Status: 'pending',
    StatusDescription: FOLLOWUP_EVAL_DESCRIPTION,
    TriggeredBy: 'alloc-failure',
    WaitUntil: new Date(atMs).toISOString(),
  };
}

/**
 * A pending evaluation, due at once, that places what `parent` left out to keep its plan
 * bounded (TriggeredBy "queued-allocs", as Nomad's evaluations for queued allocations).
 */
export function buildContinuationEval(parent: Evaluation, id: string, nowMs: number): Evaluation {
  return {
    ...derived(parent, id, nowMs),
    Status: 'pending',
    StatusDescription: CONTINUATION_EVAL_DESCRIPTION,
    TriggeredBy: 'queued-allocs',
  };
}
