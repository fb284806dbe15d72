/**
 * Where the SQLite log backend commits its appends: on a worker thread with its own connection
 * (log-append-worker.ts) for a log file, or inline on the caller's connection for an in-memory
 * log (which another connection cannot see). Either way append() resolves once the entries
 * are committed.
 */
import { Worker } from 'node:worker_threads';
import type { NewLogEntry } from './log-backend.js';
import type { AppendReply, AppendRequest } from './log-append-protocol.js';
import type { SqliteDb, SqlStatement } from '../../sqlite/sqlite-db.js';
import { insertLogBatches, prepareLogInsert } from './log-insert.js';

/** How long either connection waits for the other's write transaction (it lasts ~1 ms). */
export const APPEND_BUSY_TIMEOUT_MS = 10_000;

export interface LogAppender {
  /** Commits `entries` as indexes start, start + 1, …; rejects if nothing was committed. */
  append(start: number, entries: NewLogEntry[]): Promise<void>;
  close(): Promise<void>;
}

/** Commits on the backend's own connection, blocking the caller for the commit. */
export class InlineAppender implements LogAppender {
  private readonly insert: SqlStatement;

  constructor(private readonly db: SqliteDb) {
    this.insert = prepareLogInsert(db);
  }

  async append(start: number, entries: NewLogEntry[]): Promise<void> {
    insertLogBatches(this.db, this.insert, [{ start, types: entries.map((e) => e.type), payloads: entries.map((e) => e.payload) }]);
  }

  async close(): Promise<void> {}
}

/** Commits on a worker thread; the caller's thread goes on while the disk syncs. */
export class WorkerAppender implements LogAppender {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private failed: Error | null = null;

  constructor(path: string) {
    this.worker = new Worker(new URL('./log-append-worker.js', import.meta.url), { workerData: { path } });
    this.worker.on('message', (r: AppendReply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.ok) p.resolve();
      else p.reject(new Error(r.message));
    });
    const gone = (err: Error): void => {
      this.failed = err;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', gone);
    this.worker.on('exit', (code) => gone(new Error(`log append worker exited (code ${code})`)));
    // Only an append in flight keeps the process alive (ref'd in append, unref'd when settled).
    this.worker.unref();
  }

  append(start: number, entries: NewLogEntry[]): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    const req: AppendRequest = { id, start, types: entries.map((e) => e.type), payloads: entries.map((e) => e.payload) };
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, {
        resolve: () => this.settled(resolve),
        reject: (err) => this.settled(() => reject(err)),
      });
      this.worker.ref();
      this.worker.postMessage(req);
    });
  }

  private settled(then: () => void): void {
    if (this.pending.size === 0) this.worker.unref();
    then();
  }

  async close(): Promise<void> {
    if (this.failed) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    this.worker.ref();
    await exited;
  }
}
