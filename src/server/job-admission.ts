/**
 * Admission of a submitted job: canonical form (Nomad's defaults) and validation, with errors
 * the HTTP layer turns into 400s that name the field.
 */
import type { Job } from '../structs/index.js';
import { canonicalizeJob } from '../structs/job-defaults.js';
import { formatValidationProblem, validateJob } from '../structs/job-validate.js';
import { ServerError } from './server-api.js';
import { periodicProblems } from './periodic/periodic-launch.js';

/** Canonicalizes and validates a job; throws ServerError 400 (JOB_INVALID) listing every problem. */
export async function prepareJob(input: Job, region: string): Promise<Job> {
  if (!input || typeof input !== 'object') throw new ServerError('JOB_INVALID', { reason: 'Job: a job object is required' });
  let job: Job;
  try {
    job = canonicalizeJob(input as Parameters<typeof canonicalizeJob>[0]);
  } catch (err) {
    throw new ServerError('JOB_INVALID', { reason: `Job: ${(err as Error).message}` }, { cause: err });
  }
  job = { ...job, Region: job.Region || region, Namespace: job.Namespace || 'default' };
  const problems = validateJob(job);
  if (problems.length > 0) {
    throw new ServerError('JOB_INVALID', { reason: problems.map(formatValidationProblem).join('; ') });
  }
  const periodic = periodicProblems(job);
  if (periodic.length > 0) throw new ServerError('JOB_INVALID', { reason: periodic.map((p) => `job "${job.ID}": ${p}`).join('; ') });
  return job;
}
