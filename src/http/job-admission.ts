/**
 * How submitted jobs are prepared before they reach the server: decoding API JSON into a
 * canonical job (Nomad's defaults filled), validation, and parsing HCL (POST /v1/jobs/parse).
 * Injected into the HTTP server so tests can stub it; `defaultJobAdmission` is the real one.
 */
import { CaravanError } from '../structs/caravan-error.js';
import { DecodeContext } from '../jobspec/decode-context.js';
import { JobspecParseError, formatJobspecProblem } from '../jobspec/jobspec-error.js';
import { jobFromApiJson } from '../jobspec/job-from-json.js';
import { parseJobspec } from '../jobspec/parse-jobspec.js';
import { canonicalizeJob } from '../structs/job-defaults.js';
import { formatValidationProblem, validateJob } from '../structs/job-validate.js';
import type { Job } from '../structs/job.js';

/** Thrown by a JobAdmission when the submitted job cannot be decoded; `problems` name fields. */
export class JobDecodeError extends CaravanError<'JOB_INVALID'> {
  constructor(readonly problems: string[]) {
    super('JOB_INVALID', { reason: problems.join('\n') });
    this.name = 'JobDecodeError';
  }
}

/** The jobspec operations the HTTP layer calls. */
export interface JobAdmission {
  /** Parses an HCL2 jobspec (with `-var` style variables) into a job; throws on bad input. */
  parseHcl(hcl: string, variables: Record<string, string>, canonicalize: boolean): Promise<Job>;
  /** Decodes an API JSON job and fills Nomad's defaults; throws JobDecodeError on bad shapes. */
  canonicalize(raw: Record<string, unknown>): Job;
  /** Every validation problem, each naming its path; empty when the job is valid. */
  validate(job: Job): string[];
}

/** The real admission: src/jobspec decoding, canonicalizeJob and validateJob. */
export const defaultJobAdmission: JobAdmission = {
  async parseHcl(hcl, variables, canonicalize) {
    try {
      const draft = await parseJobspec(hcl, { filename: 'input.hcl', vars: variables });
      // Without Canonicalize Nomad returns the job as written; our draft has the same fields.
      return canonicalize ? canonicalizeJob(draft) : (draft as unknown as Job);
    } catch (err) {
      if (err instanceof JobspecParseError) throw new JobDecodeError(err.problems.map(formatJobspecProblem));
      throw err;
    }
  },
  canonicalize(raw) {
    const ctx = new DecodeContext('<request>', '');
    const draft = jobFromApiJson(raw, ctx);
    if (ctx.problems.length > 0 || draft === undefined) {
      throw new JobDecodeError(ctx.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)));
    }
    return canonicalizeJob(draft);
  },
  validate(job) {
    return validateJob(job).map(formatValidationProblem);
  },
};
