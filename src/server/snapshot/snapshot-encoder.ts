/**
 * Turns the state at one index into snapshot chunks (snapshot-format.ts), one chunk per step,
 * so a writer can yield to the event loop between chunks while new writes keep applying.
 *
 * captureState() is the point in time: it copies each table's value references (not the
 * values — the store replaces values and never mutates them), which costs a pointer copy per
 * row and no serialization. Walking the store's copy-on-write epochs instead would be O(1) up
 * front, but every scheduler snapshot taken meanwhile lengthens the epoch chain each lookup
 * walks, which makes a long snapshot write quadratic.
 */
import type { Variable } from '../../structs/variable.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import type { Allocation, Deployment, Evaluation, Job, JobSummary, Node } from '../../structs/index.js';
import type { Namespace } from '../../structs/namespace.js';
import type { NodePool } from '../../structs/node-pool.js';
import { packObjects } from '../fsm/command-codec.js';
import { plainMetric, singleTopScore } from '../state/compact-metric.js';
import { jobKey, type StateStore } from '../state/state-store.js';
import type { SerializedAcl } from '../state/acl-tables.js';
import type { SchedulerConfiguration } from '../../structs/scheduler-config.js';
import type { AutopilotConfig } from '../../structs/autopilot-config.js';
import type { JobSubmission } from '../state/job-submissions.js';
import type { StoredScalingEvent } from '../state/job-scaling-events.js';
import {
  SNAPSHOT_FORMAT,
  SnapshotTable,
  type AllocsLine,
  type HeaderLine,
  type RowsLine,
  type SnapshotCounts,
  type SnapshotLine,
} from './snapshot-format.js';

/** The state's rows at one index, by reference. */
export interface StateCapture {
  index: number;
  tableIndexes: Record<string, number>;
  jobs: Job[];
  jobVersions: Job[][];
  summaries: JobSummary[];
  evals: Evaluation[];
  nodes: Node[];
  deployments: Deployment[];
  namespaces: Namespace[];
  allocs: Allocation[];
  /** The ACL tables (small: serialized whole at capture). */
  acl?: SerializedAcl;
  /** The node pools (few: copied whole at capture). */
  nodePools?: NodePool[];
  /** The variables (copied whole at capture). */
  variables?: Variable[];
  /** The service registrations (copied whole at capture). */
  services?: ServiceRegistration[];
  /** The dynamic host volumes (copied whole at capture). */
  hostVolumes?: HostVolume[];
  /** The scheduler configuration, submitted sources and scaling events (copied whole at capture). */
  schedulerConfig?: SchedulerConfiguration;
  autopilotConfig?: AutopilotConfig;
  submissions?: JobSubmission[];
  scalingEvents?: StoredScalingEvent[];
}

/** Rows per chunk when not told otherwise: small enough to stringify in a few milliseconds. */
export const DEFAULT_ROWS_PER_CHUNK = 2000;

/** Copies the store's row references as of now (synchronous; see the file comment). */
export function captureState(store: StateStore): StateCapture {
  return {
    index: store.latestIndex(),
    tableIndexes: store.tableIndexes(),
    jobs: [...store.jobsT.values()],
    jobVersions: [...store.jobVersionsT.values()],
    summaries: [...store.summariesT.values()],
    evals: [...store.evalsT.values()],
    nodes: [...store.nodesT.values()],
    deployments: [...store.deploymentsT.values()],
    namespaces: store.namespaceTable.serialize(),
    allocs: [...store.allocsT.values()],
    acl: store.acl.serialize(),
    nodePools: store.pools.serialize(),
    variables: store.variableTable.serialize(),
    services: store.serviceTable.serialize(),
    hostVolumes: store.hostVolumeTable.serialize(),
    schedulerConfig: store.schedulerConfig(),
    autopilotConfig: store.autopilotConfig(),
    submissions: store.submissions.serialize(),
    scalingEvents: store.scalingEvents.serialize(),
  };
}

/** The row counts of a capture. */
export function captureCounts(c: StateCapture): SnapshotCounts {
  return {
    jobs: c.jobs.length,
    jobVersions: c.jobVersions.length,
    summaries: c.summaries.length,
    evals: c.evals.length,
    nodes: c.nodes.length,
    deployments: c.deployments.length,
    namespaces: c.namespaces.length,
    allocs: c.allocs.length,
  };
}

/** Yields the snapshot's chunks (each one JSON line ending in a newline), building each on demand. */
export function* encodeSnapshot(c: StateCapture, rowsPerChunk = DEFAULT_ROWS_PER_CHUNK): Generator<Buffer> {
  const per = Math.max(1, Math.floor(rowsPerChunk));
  const counts = captureCounts(c);
  const header: HeaderLine = { t: 'header', format: SNAPSHOT_FORMAT, index: c.index, tableIndexes: c.tableIndexes, counts };
  yield line(header);
  const plain: [RowsLine['t'], unknown[]][] = [
    [SnapshotTable.Jobs, c.jobs],
    [SnapshotTable.JobVersions, c.jobVersions],
    [SnapshotTable.Summaries, c.summaries],
    [SnapshotTable.Evals, c.evals],
    [SnapshotTable.Nodes, c.nodes],
    [SnapshotTable.Deployments, c.deployments],
    [SnapshotTable.Namespaces, c.namespaces],
  ];
  for (const [t, rows] of plain) {
    for (let i = 0; i < rows.length; i += per) yield line({ t, rows: rows.slice(i, i + per) } as RowsLine);
  }
  const versions = new Map<string, Job[]>();
  for (const v of c.jobVersions) if (v[0]) versions.set(jobKey(v[0].Namespace, v[0].ID), v);
  for (let i = 0; i < c.allocs.length; i += per) yield line(allocsLine(c.allocs.slice(i, i + per), versions));
  if (c.acl) yield line({ t: 'acl', acl: c.acl });
  if (c.nodePools) yield line({ t: 'nodePools', pools: c.nodePools });
  if (c.variables) yield line({ t: 'variables', variables: c.variables });
  if (c.services) yield line({ t: 'services', services: c.services });
  if (c.hostVolumes) yield line({ t: 'hostVolumes', volumes: c.hostVolumes });
  if (c.schedulerConfig) {
    yield line({ t: 'extras', schedulerConfig: c.schedulerConfig, ...(c.autopilotConfig ? { autopilotConfig: c.autopilotConfig } : {}), submissions: c.submissions ?? [], scalingEvents: c.scalingEvents ?? [] });
  }
  yield line({ t: 'end', counts });
}

/** One batch of allocations, with jobs that are stored versions replaced by their version. */
function allocsLine(batch: Allocation[], versions: Map<string, Job[]>): AllocsLine {
  const jv: (number | null)[] = new Array<number | null>(batch.length);
  const rows: Record<string, unknown>[] = new Array<Record<string, unknown>>(batch.length);
  const sm: (number | null)[] = new Array<number | null>(batch.length);
  let anyTop = false;
  for (let i = 0; i < batch.length; i++) {
    const a = batch[i]!;
    const job = a.Job;
    // Matched by version, as StateStore.serialize does: the restored alloc shares that version.
    const shared = job ? versions.get(jobKey(a.Namespace, a.JobID))?.some((v) => v.Version === job.Version) : false;
    jv[i] = shared && job ? job.Version : null;
    // The metric as plain data, so its shared parts pack once per batch (compact-metric.ts),
    // and the usual single score as one number (AllocsLine.sm).
    const top = a.Metrics ? singleTopScore(a.Metrics, a.NodeID) : null;
    sm[i] = top;
    if (top !== null) anyTop = true;
    const Metrics = a.Metrics ? plainMetric(a.Metrics, top === null) : null;
    rows[i] = { ...a, Job: shared ? null : a.Job, Metrics } as unknown as Record<string, unknown>;
  }
  const pk = packObjects(rows);
  const line: AllocsLine = pk ? { t: 'allocs', jv, pk } : { t: 'allocs', jv, rows };
  if (anyTop) line.sm = sm;
  return line;
}

function line(l: SnapshotLine): Buffer {
  return Buffer.from(JSON.stringify(l) + '\n', 'utf8');
}
