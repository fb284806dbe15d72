/**
 * The blocked readers of the state store (blocking queries, watches), filed under the tables they
 * wait on so that an apply looks only at the readers of the tables it touched. With 10,000 clients
 * each holding a query on its own node's allocations, an apply that places one allocation must
 * not visit (let alone wake) the other 9,999: a reader is woken only when one of its own tables
 * moved past the index it waits after.
 *
 * The readers an apply does wake are answered a slice of the event loop at a time. A woken
 * reader's answer runs in its promise continuations (read the state, serialise, write: ~0.35 ms
 * over HTTP), and all continuations of the readers resolved in one go run back to back before
 * the loop reads any socket: the system job's plan woke 10,000 node watches in one 3.5 s turn in
 * which no heartbeat or registration was read. So a wake queues its readers and resolves them a
 * few at a time, lets their answers run, and once the slice is spent yields one turn of the loop
 * (loop-slice.ts, as the scheduler does) before the next few.
 */
import { LoopSlice } from '../../scheduler/loop-slice.js';
import type { Table } from './state-reader.js';

/** One blocked reader. `resolve` is called at most once, by whoever ends the wait first. */
export interface ChangeWaiter {
  readonly tables: readonly Table[];
  readonly after: number;
  readonly resolve: () => void;
  /**
   * Resolved in the apply's turn, ahead of the queue: the server's own waits (a scheduling
   * worker waiting for its state to catch up) answer no client and must not wait behind
   * 10,000 clients' answers.
   */
  readonly urgent?: boolean;
}

/** How long woken readers' answers run before the loop serves others (ms). */
export const DEFAULT_WAKE_SLICE_MS = 5;

/** Readers resolved in the apply's own turn, before their cost is known. */
const FIRST_BATCH = 16;

/** The most readers resolved between two measurements of what their answers cost. */
const MAX_BATCH = 1024;

/**
 * Settles once the microtasks queued so far — and those they queue — have run: a tick queued
 * from a microtask runs only after V8 has drained the whole microtask queue. So the time to it
 * is what the woken readers' promise continuations (their answers) cost.
 */
function afterMicrotasks(): Promise<void> {
  return new Promise((resolve) => queueMicrotask(() => process.nextTick(resolve)));
}

/**
 * Waiters filed by table. `bucketOf` maps a table a waiter names to the key an apply touches
 * (a per-service pseudo-table is filed under the service table, which every service change
 * touches; per-node pseudo-tables are touched by name).
 */
export class ChangeWaiters {
  private readonly byBucket = new Map<string, Set<ChangeWaiter>>();
  /** Woken, not yet resolved: unfiled from their buckets, resolved in order a slice at a time. */
  private readonly queued = new Set<ChangeWaiter>();
  private draining = false;
  /** Filed or queued. */
  private total = 0;
  private woken = 0;

  /**
   * @param sliceMs how long woken readers' answers run before the loop serves others; 0 yields
   *   after every batch (tests), Infinity answers every woken reader in the apply's turn.
   */
  constructor(
    private readonly bucketOf: (t: Table) => string,
    private readonly sliceMs = DEFAULT_WAKE_SLICE_MS,
  ) {}

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

  /**
   * Unfiles a waiter (its wait ended: a change, the timeout or an abort), or takes it out of the
   * queue of woken readers if it ended while queued (never resolved twice); idempotent.
   */
  remove(w: ChangeWaiter): void {
    const filed = this.unfile(w);
    const queued = this.queued.delete(w);
    if (filed || queued) this.total--;
  }

  /**
   * After an apply: wakes the waiters of the touched buckets whose tables moved past their index
   * (`indexOf` reads a table's index now). `all` wakes every waiter whose tables moved (a
   * snapshot restore moves them all). Which readers wake is decided now; they are resolved a
   * slice at a time (the first few in this turn), each reading the state as it is then.
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
      if (!w.tables.some((t) => indexOf(t) > w.after)) continue;
      if (w.urgent) {
        this.remove(w);
        this.woken++;
        w.resolve();
        continue;
      }
      this.unfile(w);
      this.queued.add(w);
    }
    if (this.queued.size > 0 && !this.draining) void this.drain();
  }

  /** Waiters currently blocked (a woken one until it is resolved). */
  size(): number {
    return this.total;
  }

  /** Waiters woken by a change since the store began (not by a timeout or an abort): the cost a write puts on blocked readers. */
  wakeups(): number {
    return this.woken;
  }

  /** Woken readers not yet resolved. */
  queuedWakeups(): number {
    return this.queued.size;
  }

  private unfile(w: ChangeWaiter): boolean {
    let found = false;
    for (const t of w.tables) {
      const key = this.bucketOf(t);
      const set = this.byBucket.get(key);
      if (!set?.delete(w)) continue;
      found = true;
      if (set.size === 0) this.byBucket.delete(key);
    }
    return found;
  }

  /**
   * Resolves the queued readers in batches sized to half a slice of their measured cost, and
   * yields a turn of the loop each time the slice is spent. Readers queued meanwhile (another
   * apply) join the end of the queue.
   */
  private async drain(): Promise<void> {
    this.draining = true;
    const slice = new LoopSlice(this.sliceMs);
    let batch = FIRST_BATCH;
    try {
      while (this.queued.size > 0) {
        const start = performance.now();
        let n = 0;
        for (const w of this.queued) {
          if (n === batch) break;
          this.queued.delete(w);
          this.total--;
          this.woken++;
          n++;
          w.resolve();
        }
        if (this.sliceMs === Infinity) continue;
        await afterMicrotasks();
        const each = (performance.now() - start) / n;
        batch = each > 0 ? Math.max(1, Math.min(MAX_BATCH, Math.floor(this.sliceMs / 2 / each))) : MAX_BATCH;
        const y = slice.maybeYield();
        if (y) await y;
      }
    } finally {
      this.draining = false;
    }
  }
}
