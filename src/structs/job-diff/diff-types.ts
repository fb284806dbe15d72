/**
 * The shapes of a job diff as Nomad's API sends them (`Diff` of a plan, `Diffs` of
 * `/v1/job/:id/versions?diffs=true`). Empty lists are `null`, as Go's nil slices encode.
 */

export type DiffType = 'None' | 'Added' | 'Deleted' | 'Edited';

export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Annotations: string[] | null;
}

export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  /** Update type ("create", "destroy", "in-place update", …) → count, from the plan's annotations. */
  Updates: Record<string, number> | null;
}

export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}

/** An empty list as null, as the Go server encodes a nil slice. */
export function nullIfEmpty<T>(items: T[]): T[] | null {
  return items.length === 0 ? null : items;
}

/** The type of a whole from its parts: any change makes it Edited. */
export function editedIfAnyChange(parts: Iterable<{ Type: DiffType }>): DiffType {
  for (const p of parts) if (p.Type !== 'None') return 'Edited';
  return 'None';
}
