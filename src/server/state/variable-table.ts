/**
 * The variables of the cluster (Nomad's variables table), keyed by namespace and path, as the
 * FSM applies VariableSet and VariableDelete. Values are replaced, never mutated, so a reader
 * may keep what it got. Not copy-on-write: the scheduler never reads variables.
 */
import type { Variable } from '../../structs/variable.js';

const key = (namespace: string, path: string): string => `${namespace}\u0000${path}`;

const byNamespaceThenPath = (a: Variable, b: Variable): number =>
  a.Namespace < b.Namespace ? -1 : a.Namespace > b.Namespace ? 1 : a.Path < b.Path ? -1 : a.Path > b.Path ? 1 : 0;

export class VariableTable {
  private readonly byKey = new Map<string, Variable>();

  get(namespace: string, path: string): Variable | undefined {
    return this.byKey.get(key(namespace, path));
  }

  /** The variables of `namespace` (`*`: every one) whose path starts with `prefix`, by namespace then path. */
  list(namespace: string, prefix = ''): Variable[] {
    const out: Variable[] = [];
    for (const v of this.byKey.values()) if ((namespace === '*' || v.Namespace === namespace) && v.Path.startsWith(prefix)) out.push(v);
    return out.sort(byNamespaceThenPath);
  }

  /** Inserts or replaces a variable (already stamped with its indexes and times). */
  put(v: Variable): void {
    this.byKey.set(key(v.Namespace, v.Path), v);
  }

  delete(namespace: string, path: string): void {
    this.byKey.delete(key(namespace, path));
  }

  serialize(): Variable[] {
    return this.list('*');
  }

  /** Replaces the table; a state from before variables existed has none. */
  restore(all: readonly Variable[] | undefined): void {
    this.byKey.clear();
    for (const v of all ?? []) this.put(v);
  }
}
