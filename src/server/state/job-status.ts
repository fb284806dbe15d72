/**
 * Nomad's derived job facts: the job Status from its allocations and evaluations, and the
 * per task group summary counts kept up to date from allocation client status changes.
 */
import type { Allocation, Job, JobStatus, JobSummary, TaskGroupSummary } from '../../structs/index.js';

/** What a job's status depends on besides the job: whether it has allocations and evaluations, and live ones. */
export interface JobActivity {
  hasAllocs: boolean;
  /** A non-terminal allocation. */
  hasLiveAlloc: boolean;
  hasEvals: boolean;
  /** A non-terminal evaluation. */
  hasLiveEval: boolean;
}

/**
 * The status Nomad shows for a job: system/periodic/parameterized jobs run until stopped; a
 * stopped job is dead; otherwise running with a live alloc, pending with a live eval, dead
 * once it had allocs or evals and all are terminal, pending before anything happened.
 */
export function computeJobStatus(job: Job, activity: JobActivity): JobStatus {
  if (job.Stop) return 'dead';
  if (job.Type === 'system' || job.Periodic?.Enabled || job.ParameterizedJob) return 'running';
  if (activity.hasLiveAlloc) return 'running';
  if (activity.hasLiveEval) return 'pending';
  return activity.hasAllocs || activity.hasEvals ? 'dead' : 'pending';
}

/** An all-zero task group summary. */
export function emptyTgSummary(): TaskGroupSummary {
  return { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
}

/** A summary for a (re)registered job: existing counts kept, new groups added at zero. */
export function summaryForJob(job: Job, existing: JobSummary | undefined, index: number): JobSummary {
  const Summary: Record<string, TaskGroupSummary> = {};
  for (const tg of job.TaskGroups) Summary[tg.Name] = { ...(existing?.Summary[tg.Name] ?? emptyTgSummary()) };
  return {
    JobID: job.ID,
    Namespace: job.Namespace,
    Summary,
    Children: existing?.Children ?? { Pending: 0, Running: 0, Dead: 0 },
    CreateIndex: existing?.CreateIndex ?? index,
    ModifyIndex: index,
  };
}

type Counter = Exclude<keyof TaskGroupSummary, 'Queued'>;

function counterFor(a: Allocation): Counter | null {
  switch (a.ClientStatus) {
    case 'pending':
      return 'Starting';
    case 'running':
      return 'Running';
    case 'complete':
      return 'Complete';
    case 'failed':
      return 'Failed';
    case 'lost':
      return 'Lost';
    case 'unknown':
      return 'Unknown';
    default: {
      const never: never = a.ClientStatus;
      return never;
    }
  }
}

/**
 * summaryWithAlloc into `s` itself, for a summary its caller copied and no reader has seen (its
 * Summary record included; the task group entries are replaced, as they may be shared with the
 * summary it was copied from). True when it changed.
 */
export function countAllocInto(s: JobSummary, prev: Allocation | undefined, next: Allocation, index: number): boolean {
  const tg = s.Summary[next.TaskGroup];
  if (!tg) return false;
  const from = prev ? counterFor(prev) : null;
  const to = counterFor(next);
  if (prev && from === to) return false;
  const upd = { ...tg };
  if (from && upd[from] > 0) upd[from]--;
  if (to) upd[to]++;
  if (!prev && upd.Queued > 0) upd.Queued--;
  s.Summary[next.TaskGroup] = upd;
  s.ModifyIndex = index;
  return true;
}

/**
 * Applies one allocation change (prev → next) to a summary, returning a new summary or null
 * when nothing changed. A new pending placement takes one from Queued, as Nomad does.
 */
export function summaryWithAlloc(
  s: JobSummary,
  prev: Allocation | undefined,
  next: Allocation,
  index: number,
): JobSummary | null {
  if (!s.Summary[next.TaskGroup] || (prev && counterFor(prev) === counterFor(next))) return null;
  const copy: JobSummary = { ...s, Summary: { ...s.Summary } };
  return countAllocInto(copy, prev, next, index) ? copy : null;
}
