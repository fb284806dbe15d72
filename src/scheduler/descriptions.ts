/** The DesiredDescription texts the scheduler writes, with Nomad's wording. */
export const AllocDescription = {
  NotNeeded: 'alloc not needed due to job update',
  JobStopped: 'alloc not needed since job is stopped',
  Lost: 'alloc is lost since its node is down',
  Migrating: 'alloc is being migrated',
  Updating: 'alloc is being updated due to job update',
  Rescheduled: 'alloc was rescheduled because it failed',
  InPlace: 'alloc updating in-place',
  NodeTainted: 'alloc not needed as node is tainted',
  NotFeasible: 'alloc not needed as node is no longer feasible',
} as const;
export type AllocDescription = (typeof AllocDescription)[keyof typeof AllocDescription];

/** StatusDescription of a blocked evaluation created for the allocations left to place. */
export const BLOCKED_EVAL_DESCRIPTION = 'created to place remaining allocations';
/** StatusDescription of a follow-up evaluation for delayed reschedules. */
export const FOLLOWUP_EVAL_DESCRIPTION = 'created for delayed rescheduling';
/** StatusDescription of an evaluation that places what a bounded plan left to place. */
export const CONTINUATION_EVAL_DESCRIPTION = 'created to place the allocations a bounded plan left out';
