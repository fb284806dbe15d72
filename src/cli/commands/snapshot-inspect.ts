/**
 * What `caravan operator snapshot inspect` shows of a saved snapshot file, as Nomad's command:
 * the snapshot's ID, size, index, term and version, then one row per kind of object with its
 * count and size, largest first, and the total size. Nomad's first line, Created, comes from the
 * time in its raft snapshot's ID; a Caravan file records no creation time, so it is left out. Caravan's snapshots carry no raft term (etcd
 * leadership has none to record): Term is 0. Version is the file's snapshot format number. The sizes
 * are those of the objects' JSON, uncompressed, as Nomad's are of their encoded form.
 */
import { createHash } from 'node:crypto';
import type { SerializedState } from '../../server/state/serialized-state.js';
import { gunzipSync } from 'node:zlib';

/** One row of the per-type table (Nomad's `Name`, `Sum` bytes, `Count`). */
export interface SnapshotTypeStat {
  Name: string;
  Sum: number;
  Count: number;
}

/** The whole inspection, in the shape `-json` prints (Nomad's SnapshotInspectFormat: Meta and Stats). */
export interface SnapshotInspection {
  Meta: { ID: string; Size: number; Index: number; Term: number; Version: number };
  Stats: SnapshotTypeStat[];
}

/** Inspects a decoded snapshot file of `file` bytes. */
export function inspectSnapshot(state: SerializedState, file: Buffer): SnapshotInspection {
  const digest = createHash('sha256').update(file).digest('hex').slice(0, 12);
  const acl = state.acl;
  const kinds: [string, readonly unknown[]][] = [
    ['Job', state.jobs],
    ['JobVersion', state.jobVersions.flat()],
    ['JobSummary', state.summaries],
    ['JobSubmission', state.submissions ?? []],
    ['ScalingEvent', state.scalingEvents ?? []],
    ['Alloc', state.allocs.map((a) => a.alloc)],
    ['Eval', state.evals],
    ['Node', state.nodes],
    ['NodePool', state.nodePools ?? []],
    ['Deployment', state.deployments],
    ['Namespace', state.namespaces ?? []],
    ['Variables', state.variables ?? []],
    ['ACLToken', acl?.tokens ?? []],
    ['ACLPolicy', acl?.policies ?? []],
    ['ACLRole', acl?.roles ?? []],
    ['SchedulerConfig', state.schedulerConfig ? [state.schedulerConfig] : []],
    ['Index', Object.entries(state.tableIndexes)],
  ];
  const Stats = kinds
    .filter(([, rows]) => rows.length > 0)
    .map(([Name, rows]) => ({ Name, Count: rows.length, Sum: rows.reduce<number>((n, r) => n + Buffer.byteLength(JSON.stringify(r) ?? ''), 0) }))
    .sort((a, b) => b.Sum - a.Sum || a.Name.localeCompare(b.Name));
  return {
    Meta: { ID: `0-${state.index}-${digest}`, Size: file.length, Index: state.index, Term: 0, Version: formatOf(file) },
    Stats,
  };
}

/** The format number in the file's header line (0 for a whole-state file of an early version). */
function formatOf(file: Buffer): number {
  const lines = gunzipSync(file);
  const end = lines.indexOf(0x0a);
  const header = JSON.parse(lines.subarray(0, end < 0 ? lines.length : end).toString('utf8')) as { format?: unknown };
  return typeof header.format === 'number' ? header.format : 0;
}
