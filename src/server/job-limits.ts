/**
 * A server's limits on what one job may ask for, as Nomad's server options: `job_max_count`
 * (the sum of a job's group counts; 0 for no limit), `job_max_priority` and
 * `job_default_priority`. Admission (job-admission.ts) enforces them on every path that
 * registers or changes a job: register, plan, scale, revert, dispatch and periodic children.
 * Jobs already stored keep their counts when a limit is lowered (as Nomad: "changing it does not
 * affect existing jobs"); the scheduler places in bounded batches whatever the count.
 */
import type { Job } from '../structs/index.js';
import { DEFAULT_JOB_MAX_PRIORITY, DEFAULT_JOB_PRIORITY } from '../structs/job-defaults.js';

/** Nomad's default `job_max_count`. */
export const DEFAULT_JOB_MAX_COUNT = 50_000;

/** The limits a server admits jobs under. */
export interface JobLimits {
  /** The most a job's group counts may sum to; 0 means no limit. */
  maxCount: number;
  /** The highest priority a job may have (the lowest is 1). */
  maxPriority: number;
  /** The priority of a job that states none (or 0). */
  defaultPriority: number;
}

/** Nomad's defaults: 50,000 allocations, priorities 1..100, 50 when unstated. */
export const DEFAULT_JOB_LIMITS: Readonly<JobLimits> = Object.freeze({
  maxCount: DEFAULT_JOB_MAX_COUNT,
  maxPriority: DEFAULT_JOB_MAX_PRIORITY,
  defaultPriority: DEFAULT_JOB_PRIORITY,
});

/** The limits with Nomad's defaults where `partial` leaves a field out. */
export function resolveJobLimits(partial: Partial<JobLimits> | undefined): JobLimits {
  return { ...DEFAULT_JOB_LIMITS, ...partial };
}

/** The sum of a job's group counts. */
export function totalCount(job: Pick<Job, 'TaskGroups'>): number {
  let n = 0;
  for (const g of job.TaskGroups) n += g.Count;
  return n;
}

/** The problem of a job whose total count exceeds the limit, in Nomad's words; null when within. */
export function jobCountProblem(job: Pick<Job, 'TaskGroups'>, limits: JobLimits): string | null {
  if (limits.maxCount <= 0) return null;
  const total = totalCount(job);
  return total > limits.maxCount ? `total count was greater than configured job_max_count: ${total} > ${limits.maxCount}` : null;
}
