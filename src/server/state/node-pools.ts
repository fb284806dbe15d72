/**
 * The node pool table (Nomad's node_pools): the two built-in pools always, and those created
 * through the API or by a node registering in a new pool. Written by the FSM only; pools are
 * replaced whole, so a reader never sees one half-changed.
 */
import { builtinNodePools, isBuiltinNodePool, type NodePool } from '../../structs/node-pool.js';

export class NodePools {
  private readonly byName = new Map<string, NodePool>();

  constructor() {
    this.restore(undefined);
  }

  get(name: string): NodePool | undefined {
    return this.byName.get(name);
  }

  /** Every pool whose name starts with `prefix`, sorted by name. */
  list(prefix = ''): NodePool[] {
    return [...this.byName.values()].filter((p) => p.Name.startsWith(prefix)).sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
  }

  /** Creates or replaces a pool at `index` (CreateIndex kept from an existing one). */
  upsert(pool: Omit<NodePool, 'CreateIndex' | 'ModifyIndex'>, index: number): void {
    const prev = this.byName.get(pool.Name);
    this.byName.set(pool.Name, { ...pool, CreateIndex: prev?.CreateIndex ?? index, ModifyIndex: index });
  }

  delete(name: string): void {
    this.byName.delete(name);
  }

  serialize(): NodePool[] {
    return this.list();
  }

  /** Replaces the table with a snapshot's pools (the built-ins alone for older snapshots). */
  restore(pools: readonly NodePool[] | undefined): void {
    this.byName.clear();
    for (const p of builtinNodePools()) this.byName.set(p.Name, p);
    // The built-ins are never changed, so a snapshot's copies of them are the same ones.
    for (const p of pools ?? []) if (!isBuiltinNodePool(p.Name)) this.byName.set(p.Name, p);
  }
}
