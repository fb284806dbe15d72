/**
 * The embedded log backend: SQLite (see sqlite-db.ts) in WAL mode with synchronous=FULL, so a
 * commit is on disk before append() resolves. The appends of one turn of the event loop go to
 * the committer as one batch at the end of the turn, with their indexes, whether or not a commit
 * is in flight; the append worker commits the batches that queued up during its commit in one
 * transaction (group commit), so concurrent writers share one fsync, and a commit follows the
 * one before without waiting for this thread to run (log-append-worker.ts). The commits of a
 * log file happen on that worker thread (log-appender.ts), so the server's thread schedules
 * while the disk syncs; reads, snapshots and compaction use this thread's own connection.
 * A subscriber that throws is ended with LOG_IO and never fails the append that committed the
 * entries; a worker that dies unanswered has its batches judged by what the file holds.
 *
 * Snapshots are stored as numbered chunks (snapshot_chunks) of one snapshot id; a snapshot is
 * visible only once its row in snapshot_done exists, which commit() inserts in the same
 * transaction as the last chunks. Chunks of a snapshot never committed (a crash mid-write)
 * are deleted on open. The single-blob `snapshots` table of earlier versions is still read.
 */
import { join } from 'node:path';
import {
  LogError,
  type LogBackend,
  type LogEntry,
  type LogSnapshot,
  type LogSubscriber,
  type NewLogEntry,
  type SnapshotSink,
  type SnapshotSource,
} from './log-backend.js';
import { SqliteDb } from '../../sqlite/sqlite-db.js';
import { APPEND_BUSY_TIMEOUT_MS, InlineAppender, WorkerAppender, type LogAppender } from './log-appender.js';

interface PendingAppend {
  entries: NewLogEntry[];
  resolve: (idx: number[]) => void;
  reject: (err: unknown) => void;
}

/** How many old snapshots to keep besides the newest. */
const KEEP_SNAPSHOTS = 2;
/** Buffered chunk bytes written in one transaction: few fsyncs, bounded memory. */
const CHUNK_FLUSH_BYTES = 16 * 1024 * 1024;

/** The newest committed snapshot: its id and index, or a legacy single-blob one. */
type LatestSnapshot = { kind: 'chunks'; snap: number; index: number; chunks: number } | { kind: 'legacy'; index: number };

/** SQLite implementation of LogBackend in `<dataDir>/raft.db`. */
export class SqliteLogBackend implements LogBackend {
  private readonly db: SqliteDb;
  private closed = false;
  /** The index after the last acknowledged (committed) entry. */
  private next: number;
  /**
   * The index the next batch is given (≥ next: batches in flight hold the ones between). The
   * committer commits batches in the order they were given and refuses one that does not start
   * where the last commit ended, so after a failed batch the ones sent behind it fail too.
   */
  private assigned: number;
  /** Counts failed batches: a failure resets `assigned` only for batches given after the last reset. */
  private generation = 0;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  /** The last batch sent, settled (either way) after every batch before it. */
  private writing: Promise<void> | null = null;
  private readonly appender: LogAppender;
  private nextSnap: number;
  /** Subscribers and the next index each is owed (entries below it were delivered). */
  private readonly subscribers = new Map<LogSubscriber, { next: number }>();

  /** db: opened durable (WAL, synchronous=FULL) unless in memory. */
  private constructor(db: SqliteDb, appender: (db: SqliteDb) => LogAppender) {
    this.db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS log (idx INTEGER PRIMARY KEY, type TEXT NOT NULL, payload TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS snapshots (idx INTEGER PRIMARY KEY, data BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS snapshot_chunks (snap INTEGER NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (snap, seq));
      CREATE TABLE IF NOT EXISTS snapshot_done (snap INTEGER PRIMARY KEY, idx INTEGER NOT NULL, chunks INTEGER NOT NULL);`);
    // Chunks of a snapshot that was never committed (the process died while writing it).
    db.exec('DELETE FROM snapshot_chunks WHERE snap NOT IN (SELECT snap FROM snapshot_done)');
    const max = (sql: string): number => db.prepare(sql).get<{ m: number | null }>()?.m ?? 0;
    const lastLog = max('SELECT MAX(idx) AS m FROM log');
    const lastLegacy = max('SELECT MAX(idx) AS m FROM snapshots');
    const lastChunked = max('SELECT MAX(idx) AS m FROM snapshot_done');
    const lastSnap = Math.max(lastLegacy, lastChunked);
    this.nextSnap = max('SELECT MAX(snap) AS m FROM snapshot_done') + 1;
    const compacted = db.prepare("SELECT v FROM meta WHERE k = 'compacted'").get<{ v: number }>()?.v ?? 0;
    this.next = Math.max(lastLog, lastSnap, compacted) + 1;
    this.assigned = this.next;
    // Created once the tables exist: the worker's connection prepares its insert on open.
    this.appender = appender(db);
  }

  /**
   * Opens (creating if needed) the log in dataDir. `appender` builds the committer for the file
   * and the backend's connection (default a WorkerAppender); tests pass one with test hooks.
   */
  static open(dataDir: string, appender: (path: string, db: SqliteDb) => LogAppender = (path, db) => new WorkerAppender(path, db)): SqliteLogBackend {
    const path = join(dataDir, 'raft.db');
    return new SqliteLogBackend(SqliteDb.open(path, { busyTimeoutMs: APPEND_BUSY_TIMEOUT_MS }), (db) => appender(path, db));
  }

  /** Opens a log in memory (tests). Not durable. */
  static openInMemory(): SqliteLogBackend {
    return new SqliteLogBackend(SqliteDb.open(':memory:'), (db) => new InlineAppender(db));
  }

  append(entries: NewLogEntry[]): Promise<number[]> {
    if (this.closed) return Promise.reject(new LogError('LOG_CLOSED', 'log is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ entries, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // Let every append issued in this turn of the event loop join the same commit.
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends the queued appends to the committer as one batch, behind those in flight. */
  private flush(): void {
    this.flushScheduled = false;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const start = this.assigned;
    const generation = this.generation;
    const entries = batch.flatMap((p) => p.entries);
    this.assigned += entries.length;
    // Batches settle in the order they were sent (one committer, answering in order).
    const written = this.appender.append(start, entries).then(
      () => {
        this.next = start + entries.length;
        let idx = start;
        for (const p of batch) p.resolve(p.entries.map(() => idx++));
        if (this.subscribers.size > 0) {
          const committed: LogEntry[] = entries.map((e, i) => ({ index: start + i, type: e.type, payload: e.payload }));
          for (const [sub, pos] of this.subscribers) this.deliver(sub, pos, committed);
        }
      },
      (err: unknown) => {
        // The batches sent behind this one are refused by the committer; the next batch given
        // an index starts again where the log ends.
        if (generation === this.generation) {
          this.generation++;
          this.assigned = this.next;
        }
        const e = new LogError('LOG_IO', `log append failed: ${(err as Error).message}`, { cause: err });
        for (const p of batch) p.reject(e);
      },
    );
    this.writing = written;
    void written.then(() => {
      if (this.writing === written) this.writing = null;
    });
  }

  subscribe(fromIndex: number, subscriber: LogSubscriber): () => void {
    const pos = { next: Math.max(1, fromIndex) };
    this.subscribers.set(subscriber, pos);
    // The backlog is delivered on the next turn, so the caller holds its unsubscribe first.
    queueMicrotask(() => {
      if (!this.subscribers.has(subscriber)) return;
      if (this.closed) return this.fail(subscriber, new LogError('LOG_CLOSED', 'log is closed'));
      const compacted = this.db.prepare("SELECT v FROM meta WHERE k = 'compacted'").get<{ v: number }>()?.v ?? 0;
      if (pos.next <= compacted) {
        return this.fail(subscriber, new LogError('LOG_COMPACTED', `entries up to ${compacted} were compacted; subscribed from ${pos.next}`));
      }
      const backlog = this.db
        .prepare('SELECT idx, type, payload FROM log WHERE idx >= ? AND idx < ? ORDER BY idx')
        .all<{ idx: number; type: string; payload: string }>(pos.next, this.next)
        .map((r) => ({ index: r.idx, type: r.type, payload: r.payload }));
      this.deliver(subscriber, pos, backlog);
    });
    return () => void this.subscribers.delete(subscriber);
  }

  /**
   * Hands a subscriber the entries it has not had yet, in order. A subscriber whose onEntries
   * throws is ended with LOG_IO (the error as its cause): how much of the entries it took is
   * unknown, so it must subscribe again from what it holds. Its failure is its own: the append
   * that committed the entries has already succeeded, and other subscribers still get them.
   */
  private deliver(sub: LogSubscriber, pos: { next: number }, entries: LogEntry[]): void {
    const fresh = entries.filter((e) => e.index >= pos.next);
    if (fresh.length === 0 || fresh[0]!.index !== pos.next) return;
    pos.next = fresh[fresh.length - 1]!.index + 1;
    try {
      sub.onEntries(fresh);
    } catch (err) {
      const from = fresh[0]!.index;
      this.fail(sub, new LogError('LOG_IO', `log subscriber failed on entries ${from}–${pos.next - 1}: ${(err as Error)?.message ?? String(err)}`, { cause: err }));
    }
  }

  /** Ends a subscription with `err`; a subscriber that throws from onError too is reported as a process warning. */
  private fail(sub: LogSubscriber, err: LogError): void {
    if (!this.subscribers.delete(sub)) return;
    try {
      sub.onError(err);
    } catch (thrown) {
      process.emitWarning(`log subscriber's onError threw: ${(thrown as Error)?.message ?? String(thrown)} (after: ${err.message})`, { code: 'CARAVAN_LOG_SUBSCRIBER' });
    }
  }

  async read(fromIndex: number, toIndex?: number): Promise<LogEntry[]> {
    this.check();
    // Entries the worker committed but this backend has not acknowledged yet stay unread.
    const rows = this.db
      .prepare('SELECT idx, type, payload FROM log WHERE idx >= ? AND idx <= ? ORDER BY idx')
      .all<{ idx: number; type: string; payload: string }>(fromIndex, Math.min(toIndex ?? Number.MAX_SAFE_INTEGER, this.next - 1));
    return rows.map((r) => ({ index: r.idx, type: r.type, payload: r.payload }));
  }

  async lastIndex(): Promise<number> {
    this.check();
    return this.next - 1;
  }

  async saveSnapshot(index: number, data: Buffer): Promise<void> {
    const sink = await this.beginSnapshot(index);
    await sink.write(data);
    await sink.commit();
  }

  async loadLatestSnapshot(): Promise<LogSnapshot | null> {
    const src = await this.openLatestSnapshot();
    if (!src) return null;
    const parts: Buffer[] = [];
    for await (const c of src.chunks()) parts.push(c);
    return { index: src.index, data: parts.length === 1 ? parts[0]! : Buffer.concat(parts) };
  }

  async beginSnapshot(index: number): Promise<SnapshotSink> {
    this.check();
    const snap = this.nextSnap++;
    const insertChunk = this.db.prepare('INSERT INTO snapshot_chunks (snap, seq, data) VALUES (?, ?, ?)');
    let seq = 0;
    let buffered: Buffer[] = [];
    let bytes = 0;
    let finished = false;
    const writeBuffered = (): void => {
      for (const b of buffered) insertChunk.run(snap, seq++, b);
      buffered = [];
      bytes = 0;
    };
    const io = (what: string, fn: () => void): void => {
      this.check();
      if (finished) throw new LogError('LOG_IO', `snapshot ${snap} at ${index}: ${what} after commit or abort`);
      try {
        fn();
      } catch (err) {
        throw new LogError('LOG_IO', `snapshot ${what} failed: ${(err as Error).message}`, { cause: err });
      }
    };
    return {
      index,
      write: async (chunk) => {
        io('write', () => {
          buffered.push(chunk);
          bytes += chunk.length;
          if (bytes >= CHUNK_FLUSH_BYTES) this.db.transaction(writeBuffered);
        });
      },
      commit: async () => {
        io('commit', () =>
          this.db.transaction(() => {
            writeBuffered();
            this.db.prepare('INSERT INTO snapshot_done (snap, idx, chunks) VALUES (?, ?, ?)').run(snap, index, seq);
            this.pruneSnapshots();
          }),
        );
        finished = true;
      },
      abort: async () => {
        if (finished || this.closed) return;
        finished = true;
        buffered = [];
        this.db.prepare('DELETE FROM snapshot_chunks WHERE snap = ?').run(snap);
      },
    };
  }

  async openLatestSnapshot(): Promise<SnapshotSource | null> {
    this.check();
    const latest = this.latestSnapshot();
    if (!latest) return null;
    const db = this.db;
    const check = (): void => this.check();
    if (latest.kind === 'legacy') {
      return {
        index: latest.index,
        async *chunks() {
          check();
          const row = db.prepare('SELECT data FROM snapshots WHERE idx = ?').get<{ data: Buffer }>(latest.index);
          if (!row) throw new LogError('LOG_IO', `snapshot at ${latest.index} missing`);
          yield row.data;
        },
      };
    }
    return {
      index: latest.index,
      async *chunks() {
        // One chunk per query, not one open cursor: nothing holds the connection between chunks.
        const get = db.prepare('SELECT data FROM snapshot_chunks WHERE snap = ? AND seq = ?');
        for (let seq = 0; seq < latest.chunks; seq++) {
          check();
          const row = get.get<{ data: Buffer }>(latest.snap, seq);
          if (!row) throw new LogError('LOG_IO', `snapshot ${latest.snap} at ${latest.index}: chunk ${seq} missing`);
          yield row.data;
        }
      },
    };
  }

  private latestSnapshot(): LatestSnapshot | null {
    const done = this.db.prepare('SELECT snap, idx, chunks FROM snapshot_done ORDER BY idx DESC, snap DESC LIMIT 1').get<{ snap: number; idx: number; chunks: number }>();
    const legacy = this.db.prepare('SELECT idx FROM snapshots ORDER BY idx DESC LIMIT 1').get<{ idx: number }>();
    if (legacy && (!done || legacy.idx > done.idx)) return { kind: 'legacy', index: legacy.idx };
    return done ? { kind: 'chunks', snap: done.snap, index: done.idx, chunks: done.chunks } : null;
  }

  /** Keeps the newest KEEP_SNAPSHOTS + 1 committed snapshots; run inside the commit transaction. */
  private pruneSnapshots(): void {
    const old = this.db
      .prepare('SELECT snap FROM snapshot_done ORDER BY idx DESC, snap DESC LIMIT -1 OFFSET ?')
      .all<{ snap: number }>(KEEP_SNAPSHOTS + 1);
    const delChunks = this.db.prepare('DELETE FROM snapshot_chunks WHERE snap = ?');
    const delDone = this.db.prepare('DELETE FROM snapshot_done WHERE snap = ?');
    for (const { snap } of old) {
      delChunks.run(snap);
      delDone.run(snap);
    }
    // Single-blob snapshots of earlier versions are superseded once a chunked one is newer.
    this.db.prepare('DELETE FROM snapshots WHERE idx <= (SELECT MAX(idx) FROM snapshot_done)').run();
  }

  async compact(upToIndex: number): Promise<void> {
    this.check();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM log WHERE idx <= ?').run(upToIndex);
      this.db
        .prepare("INSERT INTO meta (k, v) VALUES ('compacted', ?) ON CONFLICT(k) DO UPDATE SET v = MAX(v, excluded.v)")
        .run(upToIndex);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Commit whatever is queued or in flight, so no append that may resolve is lost.
    while (this.writing || this.queue.length > 0) {
      this.flush();
      await this.writing;
    }
    this.subscribers.clear();
    await this.appender.close();
    this.db.close();
  }

  private check(): void {
    if (this.closed) throw new LogError('LOG_CLOSED', 'log is closed');
  }
}
