/**
 * Turning a request body into a job the server accepts: the `Job` field is required, its
 * defaults are filled, and every validation problem is reported at once as a 400 in Nomad's
 * multi-error format.
 */
import type { Job } from '../structs/job.js';
import { JobDecodeError, type JobAdmission } from './job-admission.js';
import { badRequest } from './http-errors.js';
import { objectField } from './request-body.js';

/** Formats problems as Nomad's multi-error text: "2 errors occurred:\n\t* a\n\t* b". */
export function formatProblems(problems: string[]): string {
  const head = problems.length === 1 ? '1 error occurred:' : `${problems.length} errors occurred:`;
  return `${head}\n${problems.map((p) => `\t* ${p}`).join('\n')}\n`;
}

/**
 * Extracts, canonicalizes and validates the `Job` of a register or plan body. `pathJobId`,
 * when the route names a job, must match the body's ID. `namespace` fills an empty Namespace.
 */
export function admitJob(
  admission: JobAdmission | undefined,
  body: Record<string, unknown>,
  namespace: string,
  pathJobId?: string,
): Job {
  const raw = objectField(body, 'Job');
  if (raw['ID'] !== undefined && typeof raw['ID'] !== 'string') throw badRequest('Job.ID must be a string');
  if (pathJobId !== undefined && raw['ID'] !== pathJobId) throw badRequest('Job ID does not match name');
  if (raw['Namespace'] === undefined || raw['Namespace'] === null || raw['Namespace'] === '') raw['Namespace'] = namespace;
  let job = raw as unknown as Job;
  if (admission) {
    try {
      job = admission.canonicalize(raw);
    } catch (err) {
      if (err instanceof JobDecodeError) throw badRequest(`Job decoding failed: ${formatProblems(err.problems)}`);
      throw badRequest(`invalid job: ${err instanceof Error ? err.message : String(err)}`);
    }
    const problems = admission.validate(job);
    if (problems.length > 0) throw badRequest(`Job validation failed: ${formatProblems(problems)}`);
  } else if (typeof job.ID !== 'string' || job.ID === '') {
    throw badRequest('Job.ID must be specified');
  }
  return job;
}
