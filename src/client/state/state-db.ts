/**
 * The client's local state: an SQLite database (WAL) under `<dataDir>/client/state.db` holding
 * each allocation, each task's driver handle (to reattach after an agent restart) and each
 * task's TaskState. Writes are synchronous, fsynced (synchronous = FULL) and happen on every
 * transition, so neither a SIGKILL'd agent nor a power loss loses a write that had returned.
 */
import type { Allocation, TaskState } from '../../structs/alloc.js';
import type { TaskHandle } from '../../drivers/driver.js';
import { ClientError, ClientErrorCode } from '../client-error.js';
import { SqliteDb, type SqlStatement } from '../../sqlite/sqlite-db.js';

/** What the state DB holds about one task. */
export interface StoredTask {
  handle: TaskHandle | null;
  state: TaskState | null;
}

/** A restored allocation with its tasks. */
export interface StoredAlloc {
  alloc: Allocation;
  tasks: Record<string, StoredTask>;
}

/** The persistence the runners need; StateDb implements it, tests may use MemoryStateDb. */
export interface ClientStateStore {
  putAlloc(alloc: Allocation): void;
  deleteAlloc(allocId: string): void;
  putTaskHandle(allocId: string, task: string, handle: TaskHandle | null): void;
  putTaskState(allocId: string, task: string, state: TaskState): void;
  /** Both at once, atomically (a task just started: its handle and its running state). */
  putTaskHandleAndState(allocId: string, task: string, handle: TaskHandle, state: TaskState): void;
  allAllocs(): StoredAlloc[];
  getMeta(key: string): string | undefined;
  putMeta(key: string, value: string): void;
  close(): void;
}

/** The SQLite-backed store. */
export class StateDb implements ClientStateStore {
  private readonly db: SqliteDb;
  private readonly stmts: {
    putAlloc: SqlStatement;
    delAlloc: SqlStatement;
    delTasks: SqlStatement;
    putHandle: SqlStatement;
    putState: SqlStatement;
    getMeta: SqlStatement;
    putMeta: SqlStatement;
  };

  /** Opens (creating if needed) the database at `path`. Throws ClientError StateDb. */
  constructor(path: string) {
    try {
      // Durable (WAL, synchronous=FULL): every commit is fsynced to the WAL before it returns.
      // NORMAL would survive a SIGKILL'd agent but could lose the last transitions on power loss
      // or an OS crash, and a lost "task exited" write re-runs a finished task. The writes are tiny.
      this.db = SqliteDb.open(path, { durable: true });
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS allocs (id TEXT PRIMARY KEY, body TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS tasks (
          alloc_id TEXT NOT NULL, task TEXT NOT NULL, handle TEXT, state TEXT,
          PRIMARY KEY (alloc_id, task));
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      `);
    } catch (err) {
      throw new ClientError(ClientErrorCode.StateDb, `opening client state db ${path}: ${String(err)}`, { cause: err });
    }
    this.stmts = {
      putAlloc: this.db.prepare('INSERT INTO allocs (id, body) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET body = excluded.body'),
      delAlloc: this.db.prepare('DELETE FROM allocs WHERE id = ?'),
      delTasks: this.db.prepare('DELETE FROM tasks WHERE alloc_id = ?'),
      putHandle: this.db.prepare(
        'INSERT INTO tasks (alloc_id, task, handle) VALUES (?, ?, ?) ON CONFLICT(alloc_id, task) DO UPDATE SET handle = excluded.handle',
      ),
      putState: this.db.prepare(
        'INSERT INTO tasks (alloc_id, task, state) VALUES (?, ?, ?) ON CONFLICT(alloc_id, task) DO UPDATE SET state = excluded.state',
      ),
      getMeta: this.db.prepare('SELECT value FROM meta WHERE key = ?'),
      putMeta: this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
    };
  }

  putAlloc(alloc: Allocation): void {
    this.stmts.putAlloc.run(alloc.ID, JSON.stringify(alloc));
  }

  deleteAlloc(allocId: string): void {
    this.db.transaction(() => {
      this.stmts.delAlloc.run(allocId);
      this.stmts.delTasks.run(allocId);
    });
  }

  putTaskHandle(allocId: string, task: string, handle: TaskHandle | null): void {
    this.stmts.putHandle.run(allocId, task, handle === null ? null : JSON.stringify(handle));
  }

  putTaskState(allocId: string, task: string, state: TaskState): void {
    this.stmts.putState.run(allocId, task, JSON.stringify(state));
  }

  /** One transaction, so one fsync where two statements on their own would each commit. */
  putTaskHandleAndState(allocId: string, task: string, handle: TaskHandle, state: TaskState): void {
    const h = JSON.stringify(handle);
    const s = JSON.stringify(state);
    this.db.transaction(() => {
      this.stmts.putHandle.run(allocId, task, h);
      this.stmts.putState.run(allocId, task, s);
    });
  }

  allAllocs(): StoredAlloc[] {
    const allocs = this.db.prepare('SELECT id, body FROM allocs').all<{ id: string; body: string }>();
    const tasks = this.db.prepare('SELECT alloc_id, task, handle, state FROM tasks').all<{
      alloc_id: string;
      task: string;
      handle: string | null;
      state: string | null;
    }>();
    const out = new Map<string, StoredAlloc>();
    for (const a of allocs) out.set(a.id, { alloc: JSON.parse(a.body) as Allocation, tasks: {} });
    for (const t of tasks) {
      const sa = out.get(t.alloc_id);
      if (!sa) continue;
      sa.tasks[t.task] = {
        handle: t.handle ? (JSON.parse(t.handle) as TaskHandle) : null,
        state: t.state ? (JSON.parse(t.state) as TaskState) : null,
      };
    }
    return [...out.values()];
  }

  getMeta(key: string): string | undefined {
    const row = this.stmts.getMeta.get<{ value: string }>(key);
    return row?.value;
  }

  putMeta(key: string, value: string): void {
    this.stmts.putMeta.run(key, value);
  }

  /** The journal mode and synchronous level in force (diagnostics and tests). */
  durability(): { journalMode: string; synchronous: number } {
    return {
      journalMode: String(this.db.pragmaValue('journal_mode')),
      synchronous: Number(this.db.pragmaValue('synchronous')),
    };
  }

  close(): void {
    this.db.close();
  }
}

/** An in-memory store with the same semantics, for unit tests. Values are deep-copied. */
export class MemoryStateDb implements ClientStateStore {
  private allocs = new Map<string, string>();
  private tasks = new Map<string, Map<string, { handle: string | null; state: string | null }>>();
  private meta = new Map<string, string>();

  putAlloc(alloc: Allocation): void {
    this.allocs.set(alloc.ID, JSON.stringify(alloc));
  }
  deleteAlloc(allocId: string): void {
    this.allocs.delete(allocId);
    this.tasks.delete(allocId);
  }
  putTaskHandle(allocId: string, task: string, handle: TaskHandle | null): void {
    const row = this.row(allocId, task);
    row.handle = handle === null ? null : JSON.stringify(handle);
  }
  putTaskState(allocId: string, task: string, state: TaskState): void {
    this.row(allocId, task).state = JSON.stringify(state);
  }
  putTaskHandleAndState(allocId: string, task: string, handle: TaskHandle, state: TaskState): void {
    const row = this.row(allocId, task);
    row.handle = JSON.stringify(handle);
    row.state = JSON.stringify(state);
  }
  allAllocs(): StoredAlloc[] {
    return [...this.allocs.entries()].map(([id, body]) => {
      const tasks: Record<string, StoredTask> = {};
      for (const [name, r] of this.tasks.get(id) ?? []) {
        tasks[name] = {
          handle: r.handle ? (JSON.parse(r.handle) as TaskHandle) : null,
          state: r.state ? (JSON.parse(r.state) as TaskState) : null,
        };
      }
      return { alloc: JSON.parse(body) as Allocation, tasks };
    });
  }
  getMeta(key: string): string | undefined {
    return this.meta.get(key);
  }
  putMeta(key: string, value: string): void {
    this.meta.set(key, value);
  }
  close(): void {}

  private row(allocId: string, task: string): { handle: string | null; state: string | null } {
    let m = this.tasks.get(allocId);
    if (!m) this.tasks.set(allocId, (m = new Map()));
    let r = m.get(task);
    if (!r) m.set(task, (r = { handle: null, state: null }));
    return r;
  }
}
