/**
 * The one admission of a submitted job, for every caller and every transport: API JSON (or a
 * job the server builds itself — periodic and dispatched children, reverts) is decoded into a
 * draft, checked against the route's job ID, canonicalized with Nomad's defaults and validated.
 * Every problem is reported at once, in Nomad's multi-error text, as JOB_INVALID (400), and the
 * server's job limits (job-limits.ts) are among the checks, so no path stores a job over them. The HTTP
 * layer passes the request's `Job` as it arrived; nothing reaches the state store unadmitted.
 */
import { DecodeContext } from '../jobspec/decode-context.js';
import { jobFromApiJson } from '../jobspec/job-from-json.js';
import { JobspecParseError, formatJobspecProblem } from '../jobspec/jobspec-error.js';
import { parseJobspec } from '../jobspec/parse-jobspec.js';
import type { Job } from '../structs/index.js';
import type { JobDraft } from '../structs/job-draft.js';
import { canonicalizeJob } from '../structs/job-defaults.js';
import { formatValidationProblem, validateJob } from '../structs/job-validate.js';
import { DEFAULT_JOB_LIMITS, jobCountProblem, type JobLimits } from './job-limits.js';
import { ServerError } from './server-error.js';
import { periodicProblems } from './periodic/periodic-launch.js';

/** Where a submission came from: the namespace to fill and the job ID its route names. */
export interface JobSubmissionContext {
  region: string;
  /** Fills an empty Namespace (the request's ?namespace=, default "default"). */
  namespace?: string;
  /** When the route names a job (PUT /v1/job/:id), the body's ID must be this. */
  pathJobId?: string;
  /** The server's job_max_count, job_max_priority and job_default_priority; Nomad's defaults when absent. */
  limits?: JobLimits;
}

/** Formats problems as Nomad's multi-error text: "2 errors occurred:\n\t* a\n\t* b". */
export function formatProblems(problems: readonly string[]): string {
  const head = problems.length === 1 ? '1 error occurred:' : `${problems.length} errors occurred:`;
  return `${head}\n${problems.map((p) => `\t* ${p}`).join('\n')}\n`;
}

function invalid(reason: string, cause?: unknown): ServerError<'JOB_INVALID'> {
  return new ServerError('JOB_INVALID', { reason }, cause === undefined ? undefined : { cause });
}

/** Decodes, canonicalizes and validates a submitted job; throws JOB_INVALID listing every problem. */
export function admitJob(input: unknown, ctx: JobSubmissionContext): Job {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('Job must be a JSON object');
  const raw = input as Record<string, unknown>;
  if (raw['ID'] !== undefined && typeof raw['ID'] !== 'string') throw invalid('Job.ID must be a string');
  if (ctx.pathJobId !== undefined && raw['ID'] !== ctx.pathJobId) throw invalid('Job ID does not match name');
  const decode = new DecodeContext('<request>', '');
  const draft = jobFromApiJson(raw, decode);
  if (decode.problems.length > 0 || draft === undefined) {
    throw invalid(`Job decoding failed: ${formatProblems(decode.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)))}`);
  }
  if (!draft.Namespace) draft.Namespace = ctx.namespace || 'default';
  if (!draft.Region) draft.Region = ctx.region;
  const limits = ctx.limits ?? DEFAULT_JOB_LIMITS;
  // As Nomad's jobCanonicalizer: an unstated (or zero) priority is the server's default.
  if (draft.Priority === undefined || draft.Priority === 0) draft.Priority = limits.defaultPriority;
  let job: Job;
  try {
    job = canonicalizeJob(draft);
  } catch (err) {
    throw invalid(`invalid job: ${err instanceof Error ? err.message : String(err)}`, err);
  }
  const problems = validateJob(job, { maxPriority: limits.maxPriority }).map(formatValidationProblem);
  const tooMany = jobCountProblem(job, limits);
  if (tooMany !== null) problems.push(tooMany);
  if (problems.length > 0) throw invalid(`Job validation failed: ${formatProblems(problems)}`);
  const periodic = periodicProblems(job);
  if (periodic.length > 0) throw invalid(`Job validation failed: ${formatProblems(periodic.map((p) => `job "${job.ID}": ${p}`))}`);
  return job;
}

/**
 * Parses an HCL2 jobspec (POST /v1/jobs/parse) with `-var` style variables: the canonical job
 * when `canonicalize`, else the job as written (a draft, as Nomad answers without Canonicalize).
 * Throws JOB_INVALID listing every problem.
 */
export async function parseJobHcl(hcl: string, variables: Record<string, string>, canonicalize: boolean): Promise<Job | JobDraft> {
  try {
    const draft = await parseJobspec(hcl, { filename: 'input.hcl', vars: variables });
    return canonicalize ? canonicalizeJob(draft) : draft;
  } catch (err) {
    if (err instanceof JobspecParseError) throw invalid(formatProblems(err.problems.map(formatJobspecProblem)), err);
    throw err;
  }
}
