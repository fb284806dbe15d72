/**
 * A job as a job file or an API request states it: any field may be missing. Defaults
 * (src/structs/job-defaults.ts) turn a draft into a full Job; missing and zero are different
 * (an absent `count` becomes 1, `count = 0` stays 0), as with Nomad's pointer-typed API structs.
 */
import type { Job } from './job.js';
import type { DeepPartial } from './deep-partial.js';

export type { DeepPartial } from './deep-partial.js';

/** A job whose fields may be missing, as parsed from HCL or from API JSON. */
export type JobDraft = DeepPartial<Job>;
/** A task group of a JobDraft. */
export type TaskGroupDraft = NonNullable<JobDraft['TaskGroups']>[number];
/** A task of a JobDraft. */
export type TaskDraft = NonNullable<TaskGroupDraft['Tasks']>[number];
