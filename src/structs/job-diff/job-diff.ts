/**
 * The diff of two versions of a job, as Nomad computes it for `job plan` and for
 * `/v1/job/:id/versions?diffs=true`: the job's own fields, its blocks as objects, and one
 * diff per task group and task, matched by name. Bookkeeping fields (indexes, status,
 * version, submit time, tokens) are never part of it.
 */
import type { Job, Task, TaskGroup } from '../job.js';
import {
  asBlock,
  freeFormDiff,
  networkDiffs,
  parameterizedJobDiff,
  resourcesDiff,
  scalingDiff,
  serviceDiffs,
  templateDiffs,
  vaultDiff,
  volumeDiffs,
} from './block-diffs.js';
import { editedIfAnyChange, nullIfEmpty, type DiffType, type JobDiff, type ObjectDiff, type TaskDiff, type TaskGroupDiff } from './diff-types.js';
import { blockDiff, fieldDiffs, primitiveObjectDiff, primitiveObjectSetDiff, stringSetDiff } from './field-diffs.js';
import { deepEqual, flattenPrimitives } from './flatten.js';
import { pairByKey } from './pair-by-key.js';

const JOB_BOOKKEEPING = [
  'ID',
  'Status',
  'StatusDescription',
  'Version',
  'Stable',
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
  'SubmitTime',
  'NomadTokenID',
  'VaultToken',
  'ConsulToken',
  'Payload',
];

/** Placement rules shared by jobs, groups and tasks. */
function placementDiffs(older: Partial<Pick<Job, 'Constraints' | 'Affinities' | 'Spreads'>> | null, newer: typeof older, contextual: boolean): ObjectDiff[] {
  return [
    ...primitiveObjectSetDiff(older?.Constraints, newer?.Constraints, [], 'Constraint', contextual),
    ...primitiveObjectSetDiff(older?.Affinities, newer?.Affinities, [], 'Affinity', contextual),
    ...primitiveObjectSetDiff(older?.Spreads, newer?.Spreads, [], 'Spread', contextual),
  ];
}

function presenceType(older: unknown, newer: unknown): DiffType {
  if (older === null) return 'Added';
  if (newer === null) return 'Deleted';
  return deepEqual(older, newer) ? 'None' : 'Edited';
}

function compact(list: (ObjectDiff | null)[]): ObjectDiff[] {
  return list.filter((o): o is ObjectDiff => o !== null);
}

/** The diff of one task; `older`/`newer` null when the task was added/removed. */
export function diffTask(older: Task | null, newer: Task | null, contextual: boolean): TaskDiff {
  const name = (newer ?? older)?.Name ?? '';
  if (older && newer && older.Name !== newer.Name) throw new Error(`can not diff tasks with different names: "${older.Name}" and "${newer.Name}"`);
  const filter = ['Name', 'Config'];
  const objects = compact([
    ...placementDiffs(older, newer, contextual),
    freeFormDiff('Config', older?.Config, newer?.Config, contextual),
    resourcesDiff(older?.Resources, newer?.Resources, contextual),
    primitiveObjectDiff(older?.LogConfig, newer?.LogConfig, [], 'LogConfig', contextual),
    primitiveObjectDiff(older?.DispatchPayload, newer?.DispatchPayload, [], 'DispatchPayload', contextual),
    primitiveObjectDiff(older?.Lifecycle, newer?.Lifecycle, [], 'Lifecycle', contextual),
    primitiveObjectDiff(older?.RestartPolicy, newer?.RestartPolicy, [], 'RestartPolicy', contextual),
    ...primitiveObjectSetDiff(older?.Artifacts, newer?.Artifacts, [], 'Artifact', contextual),
    ...primitiveObjectSetDiff(older?.VolumeMounts, newer?.VolumeMounts, [], 'VolumeMount', contextual),
    ...serviceDiffs(older?.Services, newer?.Services, contextual),
    vaultDiff((older as { Vault?: unknown } | null)?.Vault, (newer as { Vault?: unknown } | null)?.Vault, contextual),
    ...templateDiffs(older?.Templates, newer?.Templates, contextual),
    blockDiff('Identity', asBlock((older as { Identity?: unknown } | null)?.Identity), asBlock((newer as { Identity?: unknown } | null)?.Identity), contextual),
  ]);
  return {
    Type: presenceType(older, newer),
    Name: name,
    Fields: nullIfEmpty(fieldDiffs(flattenPrimitives(older, filter), flattenPrimitives(newer, filter), false)),
    Objects: nullIfEmpty(objects),
    Annotations: null,
  };
}

function byName<T extends { Name: string }>(a: T, b: T): number {
  return a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0;
}

/** The diff of one task group; `older`/`newer` null when the group was added/removed. */
export function diffTaskGroup(older: TaskGroup | null, newer: TaskGroup | null, contextual: boolean): TaskGroupDiff {
  const name = (newer ?? older)?.Name ?? '';
  if (older && newer && older.Name !== newer.Name) throw new Error(`can not diff task groups with different names: "${older.Name}" and "${newer.Name}"`);
  const objects = compact([
    ...placementDiffs(older, newer, contextual),
    primitiveObjectDiff(older?.RestartPolicy, newer?.RestartPolicy, [], 'RestartPolicy', contextual),
    primitiveObjectDiff(older?.ReschedulePolicy, newer?.ReschedulePolicy, [], 'ReschedulePolicy', contextual),
    primitiveObjectDiff(older?.EphemeralDisk, newer?.EphemeralDisk, [], 'EphemeralDisk', contextual),
    primitiveObjectDiff((older as { Consul?: unknown } | null)?.Consul, (newer as { Consul?: unknown } | null)?.Consul, [], 'Consul', contextual),
    primitiveObjectDiff(older?.Update, newer?.Update, ['Stagger'], 'Update', contextual),
    primitiveObjectDiff(older?.Migrate, newer?.Migrate, [], 'Migrate', contextual),
    ...networkDiffs(older?.Networks, newer?.Networks, contextual),
    scalingDiff((older as { Scaling?: unknown } | null)?.Scaling, (newer as { Scaling?: unknown } | null)?.Scaling, contextual),
    ...serviceDiffs(older?.Services, newer?.Services, contextual),
    ...volumeDiffs(older?.Volumes, newer?.Volumes, contextual),
  ]);
  const tasks = pairByKey(older?.Tasks ?? [], newer?.Tasks ?? [], (t) => t.Name)
    .map(([o, n]) => diffTask(o, n, contextual))
    .sort(byName);
  return {
    Type: presenceType(older, newer),
    Name: name,
    Fields: nullIfEmpty(fieldDiffs(flattenPrimitives(older, ['Name']), flattenPrimitives(newer, ['Name']), false)),
    Objects: nullIfEmpty(objects),
    Tasks: nullIfEmpty(tasks),
    Updates: null,
  };
}

/**
 * The diff from `older` to `newer` (either may be absent: a new or a removed job).
 * `contextual` keeps unchanged fields inside changed objects, as `job plan` shows them.
 */
export function diffJob(older: Job | null | undefined, newer: Job | null | undefined, contextual: boolean): JobDiff {
  const o = older ?? null;
  const n = newer ?? null;
  if (o === null && n === null) return { Type: 'None', ID: '', Fields: null, Objects: null, TaskGroups: null };
  if (o && n && o.ID !== n.ID) throw new Error(`can not diff jobs with different IDs: "${o.ID}" and "${n.ID}"`);
  const fields = fieldDiffs(flattenPrimitives(o, JOB_BOOKKEEPING), flattenPrimitives(n, JOB_BOOKKEEPING), false);
  const datacenters = stringSetDiff(o?.Datacenters, n?.Datacenters, 'Datacenters', contextual);
  const objects = compact([
    datacenters && datacenters.Type !== 'None' ? datacenters : null,
    ...placementDiffs(o, n, contextual),
    primitiveObjectDiff(o?.Periodic, n?.Periodic, [], 'Periodic', contextual),
    parameterizedJobDiff(o?.ParameterizedJob, n?.ParameterizedJob, contextual),
  ]);
  const groups = pairByKey(o?.TaskGroups ?? [], n?.TaskGroups ?? [], (g) => g.Name)
    .map(([og, ng]) => diffTaskGroup(og, ng, contextual))
    .sort(byName);
  const type: DiffType = o === null ? 'Added' : n === null ? 'Deleted' : editedIfAnyChange([...fields, ...objects, ...groups]);
  return {
    Type: type,
    ID: (n ?? o)!.ID,
    Fields: nullIfEmpty(fields),
    Objects: nullIfEmpty(objects),
    TaskGroups: nullIfEmpty(groups),
  };
}
