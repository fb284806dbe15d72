/** Job diffs in Nomad's shape, and the plan annotations on them. */
export * from './diff-types.js';
export { diffJob, diffTaskGroup, diffTask } from './job-diff.js';
export { annotateJobDiff, UPDATE_TYPES } from './annotate-diff.js';
