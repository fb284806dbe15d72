/**
 * The chunked snapshot format. A snapshot is a sequence of JSON lines, each one chunk: a
 * header (index, table indexes, row counts), then batches of rows per table, then an end
 * line repeating the counts so a reader can tell a complete snapshot from a cut one.
 * Allocations are written without their job when it is one of the job's stored versions
 * (`jv` holds that version), and packed like plan placements (command-codec.ts) when the
 * rows of a batch share their keys.
 */
import type { Variable } from '../../structs/variable.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';
import type { Deployment, Evaluation, Job, JobSummary, Node } from '../../structs/index.js';
import type { Namespace } from '../../structs/namespace.js';
import type { NodePool } from '../../structs/node-pool.js';
import type { Packed } from '../fsm/command-codec.js';
import type { SerializedAcl } from '../state/acl-tables.js';
import type { SchedulerConfiguration } from '../../structs/scheduler-config.js';
import type { AutopilotConfig } from '../../structs/autopilot-config.js';
import type { JobSubmission } from '../state/job-submissions.js';
import type { StoredScalingEvent } from '../state/job-scaling-events.js';

/**
 * The format number written in the header. 3: packed rows may carry dictionaries (Packed.d in
 * command-codec.ts). Format 2 snapshots (no dictionaries) are still read.
 */
export const SNAPSHOT_FORMAT = 3;
/** The formats a reader accepts. */
export const SNAPSHOT_FORMATS_READ: readonly number[] = [2, 3];

/** The tables of a snapshot, in the order they are written (job versions before allocations). */
export const SnapshotTable = {
  Jobs: 'jobs',
  JobVersions: 'jobVersions',
  Summaries: 'summaries',
  Evals: 'evals',
  Nodes: 'nodes',
  Deployments: 'deployments',
  Namespaces: 'namespaces',
  Allocs: 'allocs',
} as const;

/** One of SnapshotTable's values. */
export type SnapshotTable = (typeof SnapshotTable)[keyof typeof SnapshotTable];

/** Rows per table in a snapshot (snapshots written before namespaces were kept have no `namespaces`). */
export type SnapshotCounts = Record<SnapshotTable, number>;

/** The first line of a snapshot. */
export interface HeaderLine {
  t: 'header';
  format: number;
  index: number;
  tableIndexes: Record<string, number>;
  counts: SnapshotCounts;
}

/** A batch of plain rows of one table other than allocations. */
export type RowsLine =
  | { t: 'jobs'; rows: Job[] }
  | { t: 'jobVersions'; rows: Job[][] }
  | { t: 'summaries'; rows: JobSummary[] }
  | { t: 'evals'; rows: Evaluation[] }
  | { t: 'nodes'; rows: Node[] }
  | { t: 'deployments'; rows: Deployment[] }
  | { t: 'namespaces'; rows: Namespace[] };

/** A batch of allocations: `jv[i]` is the job version of row i (null: its Job is inline). */
export interface AllocsLine {
  t: 'allocs';
  jv: (number | null)[];
  /**
   * Format 3, optional: per row, the score of its metric when the metric's score list is the
   * scheduler's single normalized entry for the allocation's node — then written as this number
   * instead (the row's ScoreMetaData is null); null for other rows.
   */
  sm?: (number | null)[];
  /** Packed rows, or plain ones when the batch's rows don't share their keys. */
  pk?: Packed;
  rows?: Record<string, unknown>[];
}

/** The ACL tables, whole, in one line before the end (absent in older snapshots; not counted). */
export interface AclLine {
  t: 'acl';
  acl: SerializedAcl;
}

/** The node pools, whole, in one line before the end (absent in older snapshots: built-ins only; not counted). */
export interface NodePoolsLine {
  t: 'nodePools';
  pools: NodePool[];
}

/** The variables, whole, in one line before the end (absent in older snapshots: none; not counted). */
export interface VariablesLine {
  t: 'variables';
  variables: Variable[];
}

/** The service registrations, whole, in one line before the end (absent in older snapshots: none; not counted). */
export interface ServicesLine {
  t: 'services';
  services: ServiceRegistration[];
}

/** The dynamic host volumes, whole, in one line before the end (absent in older snapshots: none; not counted). */
export interface HostVolumesLine {
  t: 'hostVolumes';
  volumes: HostVolume[];
}

/**
 * The scheduler configuration, the jobs' submitted sources and their scaling events, whole, in
 * one line before the end (absent in older snapshots, which lost them: defaults and none).
 */
export interface ExtrasLine {
  t: 'extras';
  schedulerConfig: SchedulerConfiguration;
  /** Absent in snapshots written before it existed: Nomad's defaults. */
  autopilotConfig?: AutopilotConfig;
  submissions: JobSubmission[];
  scalingEvents: StoredScalingEvent[];
}

/** The last line: the same counts as the header. */
export interface EndLine {
  t: 'end';
  counts: SnapshotCounts;
}

/** Any line of a chunked snapshot. */
export type SnapshotLine = HeaderLine | RowsLine | AllocsLine | AclLine | NodePoolsLine | VariablesLine | ServicesLine | HostVolumesLine | ExtrasLine | EndLine;

/** Error reading or writing a snapshot; `code` says which failure. */
export class SnapshotError extends CaravanError<'SNAPSHOT_ABORTED' | 'SNAPSHOT_CORRUPT'> {
  constructor(code: 'SNAPSHOT_ABORTED' | 'SNAPSHOT_CORRUPT', reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'SnapshotError';
  }
}

/** Counts with every table at zero. */
export function zeroCounts(): SnapshotCounts {
  return { jobs: 0, jobVersions: 0, summaries: 0, evals: 0, nodes: 0, deployments: 0, namespaces: 0, allocs: 0 };
}
