/**
 * The serialized form of the whole state, as log snapshots persist it, and how forms written by
 * older versions read.
 */
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { Variable } from '../../structs/variable.js';
import type { NodePool } from '../../structs/node-pool.js';
import type { Namespace } from '../../structs/namespace.js';
import type { SchedulerConfiguration } from '../../structs/scheduler-config.js';
import type { AutopilotConfig } from '../../structs/autopilot-config.js';
import type { Allocation, Deployment, Evaluation, Job, JobSummary, Node } from '../../structs/index.js';
import type { JobSubmission } from './job-submissions.js';
import type { StoredScalingEvent } from './job-scaling-events.js';
import type { SerializedAcl } from './acl-tables.js';

/** The serialized form of the whole state (persisted in log snapshots). */
export interface SerializedState {
  index: number;
  tableIndexes: Record<string, number>;
  jobs: Job[];
  jobVersions: Job[][];
  summaries: JobSummary[];
  /** Allocations; Job is null when the job version is in jobVersions (see jobVersion). */
  allocs: { alloc: Allocation; jobVersion: number | null }[];
  evals: Evaluation[];
  nodes: Node[];
  deployments: Deployment[];
  /** Absent in snapshots written before the scheduler configuration existed: the default. */
  schedulerConfig?: SchedulerConfiguration;
  /** Absent in snapshots written before the autopilot configuration existed: Nomad's defaults. */
  autopilotConfig?: AutopilotConfig;
  /** Absent in snapshots written before job sources were kept. */
  submissions?: JobSubmission[];
  /** Absent in snapshots written before scaling events were kept. */
  scalingEvents?: StoredScalingEvent[];
  /** Absent in states written before namespaces were objects: those jobs use become real. */
  namespaces?: Namespace[];
  /** Absent in snapshots written before ACLs existed: no tokens, policies or roles. */
  acl?: SerializedAcl;
  /** Absent in snapshots written before node pools: the built-in ones only. */
  nodePools?: NodePool[];
  /** Absent in snapshots written before variables: none. */
  variables?: Variable[];
  /** Absent in snapshots written before native service discovery: none. */
  services?: ServiceRegistration[];
  /** Absent in snapshots written before dynamic host volumes: none. */
  hostVolumes?: HostVolume[];
}

/** The namespaces jobs used when namespaces were implicit (a state from before they were objects). */
export function implicitNamespaces(jobs: readonly Job[], index: number): Namespace[] {
  const names = new Set(jobs.map((j) => j.Namespace));
  return [...names].map((Name) => ({ Name, Description: '', Quota: '', Capabilities: null, NodePoolConfiguration: null, Meta: null, CreateIndex: index, ModifyIndex: index }));
}
