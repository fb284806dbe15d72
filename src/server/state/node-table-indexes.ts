/**
 * The indexes of the per-node pseudo-tables (nodeAllocsTableKey, nodeTableKey): what a client's
 * watch of its own allocations or node record blocks on, so a write to one node wakes only that
 * node's watches. Only tables written since the store was loaded are kept; the store answers the
 * others from the objects they cover. Moves made by an apply are undone if the apply fails.
 */
export class NodeTableIndexes {
  private readonly idx = new Map<string, number>();
  /**
   * (table, index before) of each table the apply in progress moved, in order: a flat list, not
   * a map, so a move costs one map read and one write (an apply moves one table per node it
   * places on — 10,000 for a system job's plan).
   */
  private readonly undo: (string | number | undefined)[] = [];

  /** The table's index if it was written since the store was loaded. */
  get(table: string): number | undefined {
    return this.idx.get(table);
  }

  /** Moves `table` to `index` within the apply in progress. */
  move(table: string, index: number): void {
    const before = this.idx.get(table);
    // Already at `index`: moved earlier in this apply (indexes only grow between applies).
    if (before === index) return;
    this.undo.push(table, before);
    this.idx.set(table, index);
  }

  /** The apply in progress is applied: its moves stay. */
  commit(): void {
    this.undo.length = 0;
  }

  /** The apply in progress failed: its moves are undone, newest first. */
  rollback(): void {
    const u = this.undo;
    for (let i = u.length - 2; i >= 0; i -= 2) {
      const t = u[i] as string;
      const before = u[i + 1] as number | undefined;
      if (before === undefined) this.idx.delete(t);
      else this.idx.set(t, before);
    }
    u.length = 0;
  }

  /** A snapshot was loaded: every table answers from its objects again. */
  clear(): void {
    this.idx.clear();
    this.undo.length = 0;
  }
}
