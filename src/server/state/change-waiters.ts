/**
 * The blocked readers of the state store (blocking queries, watches), filed under the tables they
 * wait on so that an apply looks only at the readers of the tables it touched. With 10,000 clients
 * each holding a query on its own node's allocations, an apply that places one allocation must
 * not visit (let alone wake) the other 9,999: a reader is woken only when one of its own tables
 * moved past the index it waits after.
 */
import type { Table } from './state-reader.js';

/** One blocked reader. `resolve` is called at most once, by whoever ends the wait first. */
export interface ChangeWaiter {
  readonly tables: readonly Table[];
  readonly after: number;
  readonly resolve: () => void;
}

/**
 * Waiters filed by table. `bucketOf` maps a table a waiter names to the key an apply touches
 * (a per-service pseudo-table is filed under the service table, which every service change
 * touches; per-node pseudo-tables are touched by name).
 */
export class ChangeWaiters {
  private readonly byBucket = new Map<string, Set<ChangeWaiter>>();
  private total = 0;
  private woken = 0;

  constructor(private readonly bucketOf: (t: Table) => string) {}

  /** Files a waiter under each of its tables' buckets. */
  add(w: ChangeWaiter): void {
    for (const t of w.tables) {
      const key = this.bucketOf(t);
      let set = this.byBucket.get(key);
      if (!set) this.byBucket.set(key, (set = new Set()));
      set.add(w);
    }
    this.total++;
  }

  /** Unfiles a waiter (its wait ended: a change, the timeout or an abort); idempotent. */
  remove(w: ChangeWaiter): void {
    let found = false;
    for (const t of w.tables) {
      const key = this.bucketOf(t);
      const set = this.byBucket.get(key);
      if (!set?.delete(w)) continue;
      found = true;
      if (set.size === 0) this.byBucket.delete(key);
    }
    if (found) this.total--;
  }

  /**
   * After an apply: wakes the waiters of the touched buckets whose tables moved past their index
   * (`indexOf` reads a table's index now). `all` wakes every waiter whose tables moved (a
   * snapshot restore moves them all).
   */
  wake(touched: Iterable<string>, indexOf: (t: Table) => number, all = false): void {
    if (this.total === 0) return;
    const candidates = new Set<ChangeWaiter>();
    if (all) {
      for (const set of this.byBucket.values()) for (const w of set) candidates.add(w);
    } else {
      for (const key of touched) for (const w of this.byBucket.get(key) ?? []) candidates.add(w);
    }
    for (const w of candidates) {
      if (w.tables.some((t) => indexOf(t) > w.after)) {
        this.woken++;
        w.resolve();
      }
    }
  }

  /** Waiters currently blocked. */
  size(): number {
    return this.total;
  }

  /** Waiters woken by a change since the store began (not by a timeout or an abort): the cost a write puts on blocked readers. */
  wakeups(): number {
    return this.woken;
  }
}
