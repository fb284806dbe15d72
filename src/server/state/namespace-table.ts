/**
 * The namespaces of the cluster, as the FSM applies NamespaceUpsert and NamespaceDelete. The
 * default namespace is always there (a new or restored state seeds it). Values are replaced,
 * never mutated, so a reader may keep what it got. Not copy-on-write: the scheduler never reads
 * namespaces, and the FSM checks a namespace command whole before it changes anything.
 */
import { defaultNamespace, DEFAULT_NAMESPACE, type Namespace } from '../../structs/namespace.js';

export class NamespaceTable {
  private readonly byName = new Map<string, Namespace>([[DEFAULT_NAMESPACE, defaultNamespace()]]);

  get(name: string): Namespace | undefined {
    return this.byName.get(name);
  }

  /** Every namespace, sorted by name. */
  list(): Namespace[] {
    return [...this.byName.values()].sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
  }

  /** Inserts or replaces a namespace (already stamped with its indexes). */
  put(ns: Namespace): void {
    this.byName.set(ns.Name, ns);
  }

  delete(name: string): void {
    if (name !== DEFAULT_NAMESPACE) this.byName.delete(name);
  }

  serialize(): Namespace[] {
    return this.list();
  }

  /** Replaces the table; a state from before namespaces existed gets the default one only. */
  restore(all: readonly Namespace[] | undefined): void {
    this.byName.clear();
    this.byName.set(DEFAULT_NAMESPACE, defaultNamespace());
    for (const ns of all ?? []) this.byName.set(ns.Name, ns);
  }
}
