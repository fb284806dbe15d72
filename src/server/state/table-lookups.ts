/** Reads over the state's tables by ID prefix and by sets of IDs. */
import type { CowTable } from './cow-table.js';

/** The items whose ID starts with `prefix`, sorted by ID. */
export function byPrefix<T extends { ID: string }>(it: Iterable<T>, prefix: string): T[] {
  const out: T[] = [];
  for (const x of it) if (x.ID.startsWith(prefix)) out.push(x);
  return out.sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
}

/** The rows of `table` with the given IDs (missing ones skipped). */
export function lookup<T>(ids: ReadonlySet<string>, table: CowTable<string, T>): T[] {
  return [...lookupIter(ids, table)];
}

/** As lookup, lazily. */
export function* lookupIter<T>(ids: ReadonlySet<string>, table: CowTable<string, T>): Generator<T> {
  for (const id of ids) {
    const v = table.get(id);
    if (v !== undefined) yield v;
  }
}
