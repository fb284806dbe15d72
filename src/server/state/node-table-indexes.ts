/**
 * The indexes of the per-node pseudo-tables (nodeAllocsTableKey, nodeTableKey): what a client's
 * watch of its own allocations or node record blocks on, so a write to one node wakes only that
 * node's watches. Only tables written since the store was loaded are kept; the store answers the
 * others from the objects they cover. Moves made by an apply are undone if the apply fails.
 */
export class NodeTableIndexes {
  private readonly idx = new Map<string, number>();
  /** Indexes as they were before the apply in progress. */
  private readonly undo = new Map<string, number | undefined>();

  /** The table's index if it was written since the store was loaded. */
  get(table: string): number | undefined {
    return this.idx.get(table);
  }

  /** Moves `table` to `index` within the apply in progress. */
  move(table: string, index: number): void {
    if (!this.undo.has(table)) this.undo.set(table, this.idx.get(table));
    this.idx.set(table, index);
  }

  /** The apply in progress is applied: its moves stay. */
  commit(): void {
    this.undo.clear();
  }

  /** The apply in progress failed: its moves are undone. */
  rollback(): void {
    for (const [t, i] of this.undo) {
      if (i === undefined) this.idx.delete(t);
      else this.idx.set(t, i);
    }
    this.undo.clear();
  }

  /** A snapshot was loaded: every table answers from its objects again. */
  clear(): void {
    this.idx.clear();
    this.undo.clear();
  }
}
