/**
 * Annotations a plan adds to a job diff so a person can read what will happen: per group the
 * scheduler's update counts ("2 create", "1 in-place update"), on a changed count whether it
 * creates or destroys, and per task whether its change is done in place or needs a new
 * allocation (only kill timeouts and the placement, service and log settings are in place).
 */
import type { DesiredUpdates } from '../plan.js';
import type { JobDiff, TaskDiff, TaskGroupDiff } from './diff-types.js';

export const UPDATE_TYPES: readonly [keyof DesiredUpdates, string][] = [
  ['Ignore', 'ignore'],
  ['Place', 'create'],
  ['Migrate', 'migrate'],
  ['Stop', 'destroy'],
  ['Canary', 'canary'],
  ['InPlaceUpdate', 'in-place update'],
  ['DestructiveUpdate', 'create/destroy update'],
];

const IN_PLACE_OBJECTS = new Set(['Service', 'Constraint', 'Affinity', 'Spread']);

function annotateCount(group: TaskGroupDiff): void {
  const count = group.Fields?.find((f) => f.Name === 'Count');
  if (!count) return;
  const before = count.Old === '' ? 0 : Number(count.Old);
  const after = count.New === '' ? 0 : Number(count.New);
  if (before < after) count.Annotations = [...(count.Annotations ?? []), 'forces create'];
  else if (after < before) count.Annotations = [...(count.Annotations ?? []), 'forces destroy'];
}

function destructive(task: TaskDiff): boolean {
  if ((task.Fields ?? []).some((f) => f.Name !== 'KillTimeout')) return true;
  for (const o of task.Objects ?? []) {
    if (IN_PLACE_OBJECTS.has(o.Name)) continue;
    // Turning the logger on or off needs a new allocation; other log settings do not.
    if (o.Name === 'LogConfig' && !(o.Fields ?? []).some((f) => f.Name === 'Disabled')) continue;
    return true;
  }
  return false;
}

function annotateTask(task: TaskDiff, group: TaskGroupDiff): void {
  if (task.Type === 'None') return;
  if (group.Type === 'Added' || group.Type === 'Deleted') {
    if (task.Type === 'Added') return void (task.Annotations = ['forces create']);
    if (task.Type === 'Deleted') return void (task.Annotations = ['forces destroy']);
  }
  task.Annotations = [destructive(task) ? 'forces create/destroy update' : 'forces in-place update'];
}

/** Adds the plan's annotations to `diff` in place. */
export function annotateJobDiff(diff: JobDiff, desired: Record<string, DesiredUpdates> | null | undefined): void {
  for (const group of diff.TaskGroups ?? []) {
    const updates = desired?.[group.Name];
    if (updates) {
      const counts: Record<string, number> = {};
      for (const [key, label] of UPDATE_TYPES) if (updates[key]) counts[label] = updates[key];
      group.Updates = counts;
    }
    annotateCount(group);
    for (const task of group.Tasks ?? []) annotateTask(task, group);
  }
}
