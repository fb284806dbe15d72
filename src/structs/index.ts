/** The Nomad API objects: one module per type, re-exported here for convenience. */
export * from './duration.js';
export * from './job.js';
export * from './resources.js';
export * from './alloc.js';
export * from './eval.js';
export * from './node.js';
export * from './deployment.js';
export * from './plan.js';
export * from './ids.js';
export * from './service.js';
export * from './template.js';
export * from './version.js';
export * from './job-draft.js';
export * from './host-volume.js';
