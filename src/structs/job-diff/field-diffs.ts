/**
 * The building blocks of a job diff: scalar field diffs, string sets, and the two ways a
 * nested block is compared — by its fields alone (`primitiveObjectDiff`, absent when no
 * field changed) or as a whole (`blockDiff`, typed by presence, fields from the flattening).
 */
import { sortFields, sortObjects } from './diff-order.js';
import { editedIfAnyChange, nullIfEmpty, type DiffType, type FieldDiff, type ObjectDiff } from './diff-types.js';
import { canonicalText, deepEqual, flattenPrimitives, type Flat } from './flatten.js';
import { pairByKey } from './pair-by-key.js';

/** One field; null when unchanged and not contextual. An empty value counts as absent. */
export function fieldDiff(oldValue: string, newValue: string, name: string, contextual: boolean): FieldDiff | null {
  if (oldValue === newValue) {
    return contextual ? { Type: 'None', Name: name, Old: oldValue, New: newValue, Annotations: null } : null;
  }
  if (oldValue === '') return { Type: 'Added', Name: name, Old: '', New: newValue, Annotations: null };
  if (newValue === '') return { Type: 'Deleted', Name: name, Old: oldValue, New: '', Annotations: null };
  return { Type: 'Edited', Name: name, Old: oldValue, New: newValue, Annotations: null };
}

/** Every field of two flattenings, sorted. */
export function fieldDiffs(oldFlat: Flat | null, newFlat: Flat | null, contextual: boolean): FieldDiff[] {
  const diffs: FieldDiff[] = [];
  const older = oldFlat ?? new Map<string, string>();
  const newer = newFlat ?? new Map<string, string>();
  for (const [name, oldValue] of older) {
    const d = fieldDiff(oldValue, newer.get(name) ?? '', name, contextual);
    if (d) diffs.push(d);
  }
  for (const [name, newValue] of newer) {
    if (older.has(name)) continue;
    const d = fieldDiff('', newValue, name, contextual);
    if (d) diffs.push(d);
  }
  return sortFields(diffs);
}

/** Two lists of strings compared as sets, one field per member under the list's name. */
export function stringSetDiff(oldList: readonly string[] | null | undefined, newList: readonly string[] | null | undefined, name: string, contextual: boolean): ObjectDiff | null {
  const older = new Set(oldList ?? []);
  const newer = new Set(newList ?? []);
  const fields: FieldDiff[] = [];
  let added = false;
  let removed = false;
  for (const v of older) {
    if (!newer.has(v)) {
      fields.push(fieldDiff(v, '', name, contextual)!);
      removed = true;
    } else if (contextual) fields.push(fieldDiff(v, v, name, contextual)!);
  }
  for (const v of newer) {
    if (!older.has(v)) {
      fields.push(fieldDiff('', v, name, contextual)!);
      added = true;
    }
  }
  let type: DiffType;
  if (added && removed) type = 'Edited';
  else if (added) type = 'Added';
  else if (removed) type = 'Deleted';
  else if (fields.length === 0) return null;
  else type = 'None';
  return { Type: type, Name: name, Fields: nullIfEmpty(sortFields(fields)), Objects: null };
}

/** The type of an object from its field diffs; null when none changed. */
function typeFromFields(fields: readonly FieldDiff[]): DiffType | null {
  let added = false;
  let deleted = false;
  for (const f of fields) {
    if (f.Type === 'Edited') return 'Edited';
    if (f.Type === 'Added') added = true;
    if (f.Type === 'Deleted') deleted = true;
  }
  if (added && deleted) return 'Edited';
  if (added) return 'Added';
  if (deleted) return 'Deleted';
  return null;
}

/** A block compared by its scalar fields; null when none changed. */
export function primitiveObjectDiff(oldBlock: unknown, newBlock: unknown, filter: readonly string[], name: string, contextual: boolean): ObjectDiff | null {
  const fields = fieldDiffs(flattenPrimitives(oldBlock, filter), flattenPrimitives(newBlock, filter), contextual);
  const type = typeFromFields(fields);
  return type === null ? null : { Type: type, Name: name, Fields: nullIfEmpty(fields), Objects: null };
}

/**
 * Two lists of blocks compared as sets: members are matched by `keyOf` (by default their
 * whole content, so an edited member shows as one deleted and one added).
 */
export function primitiveObjectSetDiff(
  oldList: readonly unknown[] | null | undefined,
  newList: readonly unknown[] | null | undefined,
  filter: readonly string[],
  name: string,
  contextual: boolean,
  keyOf: (block: unknown) => string = canonicalText,
): ObjectDiff[] {
  const diffs = pairByKey(oldList ?? [], newList ?? [], keyOf).map(([o, n]) => primitiveObjectDiff(o ?? undefined, n ?? undefined, filter, name, contextual));
  return sortObjects(diffs.filter((d): d is ObjectDiff => d !== null));
}

/** How a whole block's fields are flattened and which nested objects it has. */
export interface BlockShape<T> {
  flatten?: (block: T) => Flat | null;
  children?: (oldBlock: T | null, newBlock: T | null, contextual: boolean) => (ObjectDiff | null)[];
  /** Sort the nested objects (most blocks keep their declaration order). */
  sortChildren?: boolean;
}

/** A block compared as a whole: null when equal, else Added/Deleted/Edited with its fields. */
export function blockDiff<T>(name: string, oldBlock: T | null | undefined, newBlock: T | null | undefined, contextual: boolean, shape: BlockShape<T> = {}): ObjectDiff | null {
  const older = oldBlock ?? null;
  const newer = newBlock ?? null;
  if (deepEqual(older, newer)) return null;
  const type: DiffType = older === null ? 'Added' : newer === null ? 'Deleted' : 'Edited';
  const flatten = shape.flatten ?? ((b: T) => flattenPrimitives(b));
  const fields = fieldDiffs(older === null ? null : flatten(older), newer === null ? null : flatten(newer), contextual);
  const objects = (shape.children?.(older, newer, contextual) ?? []).filter((o): o is ObjectDiff => o !== null);
  return { Type: type, Name: name, Fields: nullIfEmpty(fields), Objects: nullIfEmpty(shape.sortChildren ? sortObjects(objects) : objects) };
}

/** The type of a container from its own fields and nested diffs. */
export function containerType(...parts: (readonly { Type: DiffType }[] | null)[]): DiffType {
  return editedIfAnyChange(parts.flatMap((p) => p ?? []));
}
