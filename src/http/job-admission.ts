/**
 * How submitted jobs are prepared before they reach the server: parsing HCL (POST
 * /v1/jobs/parse), filling Nomad's defaults, and validation. Injected into the HTTP server
 * so the routes do not depend on the jobspec package directly and tests can stub it.
 */
import type { Job } from '../structs/job.js';

/** The jobspec operations the HTTP layer calls. */
export interface JobAdmission {
  /** Parses an HCL2 jobspec (with `-var` style variables) into an API Job; throws on bad input. */
  parseHcl(hcl: string, variables: Record<string, string>): Job;
  /** Fills Nomad's defaults into a job (returns the canonical job; may mutate its input). */
  canonicalize(job: Job): Job;
  /** Every validation problem, each naming its path; empty when the job is valid. */
  validate(job: Job): string[];
}
