/** The jobspec package: job files (HCL2 or API JSON) into the Job model. */
export { parseJobspec, parseJobspecFile, loadJobFile, parseVarFlags, type JobspecOptions } from './parse-jobspec.js';
export { JobspecParseError, formatJobspecProblem, type JobspecProblem } from './jobspec-error.js';
export { jobFromApiJson, decodeApiJob } from './job-from-json.js';
export { DecodeContext } from './decode-context.js';
export type { JobDraft, TaskGroupDraft, TaskDraft, DeepPartial } from '../structs/job-draft.js';
