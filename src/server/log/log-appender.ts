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
import { insertLogBatches, isLogBatchCommitted, prepareLogInsert } from './log-insert.js';

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

/**
 * Test hooks of the append worker, set only by tests constructing a WorkerAppender themselves;
 * the server's log (SqliteLogBackend.open) never passes them.
 */
export interface AppendWorkerTesting {
  /** The worker thread exits right after its n-th commit, before answering it. */
  exitAfterCommits?: number;
  /** Element 0 counts the batches the worker has taken off its port (a test waits for it before sending more). */
  taken?: Int32Array;
}

/** A request sent to the worker and not answered yet. */
interface PendingBatch {
  req: AppendRequest;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * Commits on a worker thread; the caller's thread goes on while the disk syncs.
 *
 * A worker that dies (an uncaught error, its thread ended) may have committed batches it did not
 * answer: each unanswered batch is looked up in the log file on the backend's own connection
 * (`db`), and acknowledged if it is there as sent, failed otherwise, so a durable write is
 * never reported lost. The first batch not found fails with every one behind it (they follow it
 * in the log). The next append starts a new worker.
 */
export class WorkerAppender implements LogAppender {
  private worker: Worker | null = null;
  private nextId = 1;
  /** Unanswered batches in the order sent (a Map iterates in insertion order). */
  private readonly pending = new Map<number, PendingBatch>();
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly db: SqliteDb,
    private readonly testing: AppendWorkerTesting = {},
  ) {
    // Started with the backend, whose tables exist by now: the worker prepares its insert on open.
    this.worker = this.start();
  }

  private start(): Worker {
    const worker = new Worker(new URL('./log-append-worker.js', import.meta.url), { workerData: { path: this.path, ...this.testing } });
    worker.on('message', (r: AppendReply) => {
      const p = this.pending.get(r.id);
      if (!p) return;
      this.pending.delete(r.id);
      if (r.ok) p.resolve();
      else p.reject(new Error(r.message));
    });
    worker.on('error', (err) => this.died(worker, err));
    worker.on('exit', (code) => this.died(worker, new Error(`log append worker exited (code ${code})`)));
    // Only an append in flight keeps the process alive (ref'd in append, unref'd when settled).
    worker.unref();
    return worker;
  }

  /** Settles what `worker` left unanswered by what the log file holds; later appends start a new worker. */
  private died(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const unanswered = [...this.pending.values()];
    this.pending.clear();
    let lost = false;
    for (const p of unanswered) {
      if (!lost) {
        try {
          lost = !isLogBatchCommitted(this.db, p.req);
        } catch {
          lost = true;
        }
      }
      if (lost) p.reject(err);
      else p.resolve();
    }
  }

  append(start: number, entries: NewLogEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('log append worker is closed'));
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    const req: AppendRequest = { id, start, types: entries.map((e) => e.type), payloads: entries.map((e) => e.payload) };
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, {
        req,
        resolve: () => this.settled(worker, resolve),
        reject: (err) => this.settled(worker, () => reject(err)),
      });
      worker.ref();
      worker.postMessage(req);
    });
  }

  private settled(worker: Worker, then: () => void): void {
    if (this.pending.size === 0) worker.unref();
    then();
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    worker.ref();
    await exited;
  }
}
