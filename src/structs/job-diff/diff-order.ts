/**
 * The order of diff entries: fields by name then values, objects by name then type (Edited,
 * Added, Deleted, None) then size then contents — the order Nomad's CLI and UI show them in.
 */
import type { DiffType, FieldDiff, ObjectDiff } from './diff-types.js';

const TYPE_RANK: Record<DiffType, number> = { Edited: 0, Added: 1, Deleted: 2, None: 3 };

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareFields(a: FieldDiff, b: FieldDiff): number {
  return compareStrings(a.Name, b.Name) || compareStrings(a.Old, b.Old) || compareStrings(a.New, b.New);
}

export function compareObjects(a: ObjectDiff, b: ObjectDiff): number {
  const byHeader =
    compareStrings(a.Name, b.Name) ||
    TYPE_RANK[a.Type] - TYPE_RANK[b.Type] ||
    (a.Fields?.length ?? 0) - (b.Fields?.length ?? 0) ||
    (a.Objects?.length ?? 0) - (b.Objects?.length ?? 0);
  if (byHeader !== 0) return byHeader;
  const af = a.Fields ?? [];
  const bf = b.Fields ?? [];
  for (let i = 0; i < af.length; i++) {
    const c = compareFields(af[i]!, bf[i]!);
    if (c !== 0) return c;
  }
  const ao = a.Objects ?? [];
  const bo = b.Objects ?? [];
  for (let i = 0; i < ao.length; i++) {
    const c = compareObjects(ao[i]!, bo[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

export function sortFields(fields: FieldDiff[]): FieldDiff[] {
  return fields.sort(compareFields);
}

export function sortObjects(objects: ObjectDiff[]): ObjectDiff[] {
  return objects.sort(compareObjects);
}
