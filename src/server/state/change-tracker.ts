/**
 * The state store's indexes and its blocked readers: the latest applied index, each table's
 * index, the per-node, per-job, per-service and per-object pseudo-tables a blocking read may wait
 * on, what the apply in progress touched, and who waits on what (change-waiters.ts). An apply
 * marks what it writes (touch, touchObject, touchPseudo); finishApply moves the store's index and
 * wakes only the readers of what was touched. Written by the state store only.
 */
import {
  JOB_TABLE_PREFIX,
  NODE_TABLE_PREFIX,
  SERVICE_TABLE_PREFIX,
  Table,
  type StateReader,
} from './state-reader.js';
import { OBJECT_TABLE_PREFIX, WatchedObjects, objectTableIndex, objectTableKey, type ObjectTable } from './object-tables.js';
import { ChangeWaiters, type ChangeWaiter } from './change-waiters.js';
import { NodeTableIndexes } from './node-table-indexes.js';
import type { Clock } from '../../time/clock.js';

/** The table-index key under which restoreAt() records the restore's index. */
const RESTORE_INDEX_KEY = 'snapshot_restore';

/** The tracker's indexes as they were when an apply began (see savepoint()). */
export interface TrackerSavepoint {
  readonly index: number;
  readonly tableIdx: ReadonlyMap<Table, number>;
}

/** Indexes, touched tables and blocked readers of one state store. */
export class ChangeTracker {
  private index = 0;
  private readonly tableIdx = new Map<Table, number>();
  private readonly waiters = new ChangeWaiters((t) => (t.startsWith(SERVICE_TABLE_PREFIX) ? Table.Services : t));
  /** The objects blocked readers wait on (touchObject files only those). */
  private readonly watchedObjects = new WatchedObjects();
  /** Tables and per-node pseudo-tables touched by the apply in progress: whose waiters it may wake. */
  private readonly touched = new Set<string>();
  /** Set by a snapshot restore: every waiter's tables moved. */
  private wakeAll = false;
  /** Per-node and per-job pseudo-table indexes; one not written since the store was loaded answers from its objects (pseudoFallback). */
  private readonly nodeTables = new NodeTableIndexes();

  /**
   * @param rows the store's rows, read for the indexes of pseudo-tables (an object's ModifyIndex,
   *   the highest of a node's or job's rows).
   * @param clock times the waits of blocking queries (the server's clock; fake in tests).
   */
  constructor(
    private readonly rows: StateReader,
    private readonly clock: Clock,
  ) {}

  latestIndex(): number {
    return this.index;
  }

  tableIndex(table: Table): number {
    if (table.startsWith(OBJECT_TABLE_PREFIX)) return objectTableIndex(this.rows, table);
    if (table.startsWith(NODE_TABLE_PREFIX) || table.startsWith(JOB_TABLE_PREFIX)) return this.nodeTables.get(table) ?? this.pseudoFallback(table);
    const i = this.tableIdx.get(table);
    if (i !== undefined || !table.startsWith(SERVICE_TABLE_PREFIX)) return i ?? 0;
    // A per-service pseudo-table (serviceTableKey): the service's own index.
    const key = table.slice(SERVICE_TABLE_PREFIX.length);
    const sep = key.indexOf('\u0000');
    return this.rows.serviceIndex(key.slice(0, sep), key.slice(sep + 1));
  }

  /**
   * A per-node or per-job pseudo-table not written since the store was loaded: the highest
   * ModifyIndex of what it covers (at least the last restore's index), never above any index a
   * later write gives it.
   */
  private pseudoFallback(table: Table): number {
    let max = this.restoreIndex();
    if (table.startsWith(JOB_TABLE_PREFIX)) {
      const rest = table.slice(JOB_TABLE_PREFIX.length);
      const slash = rest.indexOf('/');
      const sep = rest.indexOf('\u0000', slash);
      const [of, namespace, jobId] = [rest.slice(0, slash), rest.slice(slash + 1, sep), rest.slice(sep + 1)];
      const rows = of === Table.Allocs ? this.rows.allocsByJob(namespace, jobId) : of === Table.Evals ? this.rows.evalsByJob(namespace, jobId) : this.rows.deploymentsByJob(namespace, jobId);
      for (const r of rows) max = Math.max(max, r.ModifyIndex);
      return max;
    }
    const rest = table.slice(NODE_TABLE_PREFIX.length);
    if (rest.startsWith('allocs/')) {
      for (const a of this.rows.allocsByNode(rest.slice('allocs/'.length))) max = Math.max(max, a.ModifyIndex);
    } else if (rest.startsWith('record/')) {
      max = Math.max(max, this.rows.nodeById(rest.slice('record/'.length))?.ModifyIndex ?? 0);
    } else if (rest.startsWith('host_volumes/')) {
      for (const v of this.rows.hostVolumesByNode(rest.slice('host_volumes/'.length))) max = Math.max(max, v.ModifyIndex);
    }
    return max;
  }

  /** Every table's index, as a plain record (for snapshots). */
  tableIndexes(): Record<string, number> {
    return Object.fromEntries(this.tableIdx);
  }

  /** The log index of the last snapshot restored into the running cluster (0: none). */
  restoreIndex(): number {
    return this.tableIdx.get(RESTORE_INDEX_KEY as Table) ?? 0;
  }

  /** Blocked readers woken by a change so far (not by their timeout or an abort). */
  watchWakeups(): number {
    return this.waiters.wakeups();
  }

  /** Readers blocked right now. */
  blockedWatches(): number {
    return this.waiters.size();
  }

  // ---- an apply ----

  /** Marks `tables` changed at index. */
  touch(index: number, ...tables: Table[]): void {
    for (const t of tables) {
      this.tableIdx.set(t, index);
      this.touched.add(t);
    }
  }

  /**
   * Marks one object written in this apply: its blocked readers, if it has any, are looked at
   * (object-tables.ts; nothing is stored, the pseudo-table's index is the object's own). The
   * apply is synchronous, so no reader can begin to wait on it before finishApply.
   */
  touchObject(table: ObjectTable, key: string): void {
    if (this.watchedObjects.has(table, key)) this.touched.add(objectTableKey(table, key));
  }

  /** Moves a per-node or per-job pseudo-table to `index` (undone if the apply fails). */
  touchPseudo(index: number, table: Table): void {
    this.nodeTables.move(table, index);
    this.touched.add(table);
  }

  /** The indexes as they are before an apply, for rollback() if it fails. */
  savepoint(): TrackerSavepoint {
    return { index: this.index, tableIdx: new Map(this.tableIdx) };
  }

  /** The apply in progress failed: the indexes are put back as they were at `sp`, and nothing it touched wakes anyone. */
  rollback(sp: TrackerSavepoint): void {
    this.tableIdx.clear();
    for (const [t, i] of sp.tableIdx) this.tableIdx.set(t, i);
    this.index = sp.index;
    this.nodeTables.rollback();
    this.touched.clear();
    this.wakeAll = false;
  }

  /** Ends one apply: advances the index to `index` and wakes the readers whose tables it moved. */
  finishApply(index: number): void {
    this.index = Math.max(this.index, index);
    this.nodeTables.commit();
    // Only the readers of what this apply touched are looked at (change-waiters.ts).
    const all = this.wakeAll;
    this.wakeAll = false;
    const touched = [...this.touched];
    this.touched.clear();
    this.waiters.wake(touched, (t) => this.tableIndex(t), all);
  }

  // ---- loading a whole state ----

  /**
   * The store was loaded from a serialized state at `index` with these table indexes: the
   * pseudo-tables answer from their objects again, and the readers whose tables moved past
   * their index answer now (a follower that loads a snapshot while serving: no apply of theirs
   * may follow soon).
   */
  restored(index: number, tableIndexes: Record<string, number>): void {
    this.tableIdx.clear();
    for (const [t, i] of Object.entries(tableIndexes)) this.tableIdx.set(t as Table, i);
    this.nodeTables.clear();
    this.index = index;
    this.waiters.wake([], (t) => this.tableIndex(t), true);
  }

  /**
   * A saved state was restored into the running cluster as log entry `index`: every table — and
   * the state — is at `index`, kept as RESTORE_INDEX_KEY too, and the next finishApply wakes
   * every reader (see StateStore.restoreAt).
   */
  restoredAt(index: number): void {
    this.tableIdx.clear();
    for (const t of Object.values(Table)) this.tableIdx.set(t, index);
    this.tableIdx.set(RESTORE_INDEX_KEY as Table, index);
    this.index = index;
    this.wakeAll = true;
  }

  // ---- blocking reads ----

  /**
   * Resolves with the max index of `tables` once it exceeds afterIndex, or at timeout/abort
   * with the current one.
   */
  waitForChange(tables: Table[], afterIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    return this.wait(tables, afterIndex, timeoutMs, signal, false);
  }

  /** waitForChange; `urgent` is resolved in the apply's turn, ahead of the woken readers queued (change-waiters.ts). */
  private wait(tables: Table[], afterIndex: number, timeoutMs: number, signal: AbortSignal | undefined, urgent: boolean): Promise<number> {
    const cur = this.maxTableIndex(tables);
    if (cur > afterIndex || signal?.aborted || timeoutMs <= 0) return Promise.resolve(cur);
    return new Promise((resolve) => {
      let ended = false;
      const done = (): void => {
        if (ended) return;
        ended = true;
        timer.cancel();
        signal?.removeEventListener('abort', done);
        this.waiters.remove(waiter);
        this.watchedObjects.remove(tables);
        resolve(this.maxTableIndex(tables));
      };
      const waiter: ChangeWaiter = { tables, after: afterIndex, resolve: done, urgent };
      this.waiters.add(waiter);
      this.watchedObjects.add(tables);
      const timer = this.clock.setTimer(timeoutMs, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Resolves once latestIndex() >= index or after timeoutMs; returns the latest index. */
  waitForIndex(index: number, timeoutMs: number): Promise<number> {
    if (this.index >= index) return Promise.resolve(this.index);
    const all = Object.values(Table);
    const loop = async (): Promise<number> => {
      const deadline = this.clock.now() + timeoutMs;
      while (this.index < index && this.clock.now() < deadline) {
        // The server's own wait (a scheduling worker's): not behind clients' answers.
        await this.wait(all, this.index, deadline - this.clock.now(), undefined, true);
      }
      return this.index;
    };
    return loop();
  }

  private maxTableIndex(tables: Table[]): number {
    let m = 0;
    for (const t of tables) m = Math.max(m, this.tableIndex(t));
    return m;
  }
}
