/** Construction of server-created evaluations with Nomad's defaults. */
import type { Evaluation, Job } from '../structs/index.js';
import { generateId } from '../structs/index.js';

/** A new pending evaluation for a job; `nowNanos` stamps CreateTime/ModifyTime. */
export function newEvaluation(job: Pick<Job, 'ID' | 'Namespace' | 'Priority' | 'Type' | 'JobModifyIndex'>, triggeredBy: string, nowNanos: number, fields: Partial<Evaluation> = {}): Evaluation {
  return {
    ID: generateId(),
    Namespace: job.Namespace,
    Priority: job.Priority,
    Type: job.Type,
    TriggeredBy: triggeredBy,
    JobID: job.ID,
    JobModifyIndex: job.JobModifyIndex,
    NodeID: '',
    NodeModifyIndex: 0,
    DeploymentID: '',
    Status: 'pending',
    StatusDescription: '',
    Wait: 0,
    WaitUntil: null,
    NextEval: '',
    PreviousEval: '',
    BlockedEval: '',
    RelatedEvals: null,
    FailedTGAllocs: null,
    ClassEligibility: null,
    EscapedComputedClass: false,
    QuotaLimitReached: '',
    AnnotatePlan: false,
    QueuedAllocations: null,
    LeaderACL: '',
    SnapshotIndex: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    CreateTime: nowNanos,
    ModifyTime: nowNanos,
    ...fields,
  };
}
