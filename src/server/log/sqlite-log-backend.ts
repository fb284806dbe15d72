/**
 * The embedded log backend: SQLite (better-sqlite3) in WAL mode with synchronous=FULL, so a
 * commit is on disk before append() resolves. Appends arriving while one commit is being
 * prepared are grouped into a single transaction (group commit), so concurrent writers share
 * one fsync instead of queueing behind each other's.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LogError, type LogBackend, type LogEntry, type LogSnapshot, type NewLogEntry } from './log-backend.js';

interface PendingAppend {
  entries: NewLogEntry[];
  resolve: (idx: number[]) => void;
  reject: (err: unknown) => void;
}

/** How many old snapshots to keep besides the newest. */
const KEEP_SNAPSHOTS = 2;

/** SQLite implementation of LogBackend in `<dataDir>/raft.db`. */
export class SqliteLogBackend implements LogBackend {
  private readonly db: Database.Database;
  private closed = false;
  private next: number;
  private queue: PendingAppend[] = [];
  private flushScheduled = false;
  private readonly insert: Database.Statement;

  private constructor(db: Database.Database) {
    this.db = db;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`CREATE TABLE IF NOT EXISTS log (idx INTEGER PRIMARY KEY, type TEXT NOT NULL, payload TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS snapshots (idx INTEGER PRIMARY KEY, data BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v INTEGER NOT NULL);`);
    this.insert = db.prepare('INSERT INTO log (idx, type, payload) VALUES (?, ?, ?)');
    const lastLog = (db.prepare('SELECT MAX(idx) AS m FROM log').get() as { m: number | null }).m ?? 0;
    const lastSnap = (db.prepare('SELECT MAX(idx) AS m FROM snapshots').get() as { m: number | null }).m ?? 0;
    const compacted = (db.prepare("SELECT v FROM meta WHERE k = 'compacted'").get() as { v: number } | undefined)?.v ?? 0;
    this.next = Math.max(lastLog, lastSnap, compacted) + 1;
  }

  /** Opens (creating if needed) the log in dataDir. */
  static open(dataDir: string): SqliteLogBackend {
    mkdirSync(dataDir, { recursive: true });
    return new SqliteLogBackend(new Database(join(dataDir, 'raft.db')));
  }

  /** Opens a log in memory (tests). Not durable. */
  static openInMemory(): SqliteLogBackend {
    return new SqliteLogBackend(new Database(':memory:'));
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

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const start = this.next;
    const results: number[][] = [];
    try {
      this.db.transaction(() => {
        let idx = start;
        for (const p of batch) {
          const out: number[] = [];
          for (const e of p.entries) {
            this.insert.run(idx, e.type, e.payload);
            out.push(idx++);
          }
          results.push(out);
        }
      })();
    } catch (err) {
      const e = new LogError('LOG_IO', `log append failed: ${(err as Error).message}`, { cause: err });
      for (const p of batch) p.reject(e);
      return;
    }
    this.next = start + batch.reduce((n, p) => n + p.entries.length, 0);
    batch.forEach((p, i) => p.resolve(results[i]!));
  }

  async read(fromIndex: number, toIndex?: number): Promise<LogEntry[]> {
    this.check();
    const rows = this.db
      .prepare('SELECT idx, type, payload FROM log WHERE idx >= ? AND idx <= ? ORDER BY idx')
      .all(fromIndex, toIndex ?? Number.MAX_SAFE_INTEGER) as { idx: number; type: string; payload: string }[];
    return rows.map((r) => ({ index: r.idx, type: r.type, payload: r.payload }));
  }

  async lastIndex(): Promise<number> {
    this.check();
    return this.next - 1;
  }

  async saveSnapshot(index: number, data: Buffer): Promise<void> {
    this.check();
    this.db.transaction(() => {
      this.db.prepare('INSERT OR REPLACE INTO snapshots (idx, data) VALUES (?, ?)').run(index, data);
      this.db
        .prepare('DELETE FROM snapshots WHERE idx NOT IN (SELECT idx FROM snapshots ORDER BY idx DESC LIMIT ?)')
        .run(KEEP_SNAPSHOTS + 1);
    })();
  }

  async loadLatestSnapshot(): Promise<LogSnapshot | null> {
    this.check();
    const row = this.db.prepare('SELECT idx, data FROM snapshots ORDER BY idx DESC LIMIT 1').get() as
      | { idx: number; data: Buffer }
      | undefined;
    return row ? { index: row.idx, data: row.data } : null;
  }

  async compact(upToIndex: number): Promise<void> {
    this.check();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM log WHERE idx <= ?').run(upToIndex);
      this.db
        .prepare("INSERT INTO meta (k, v) VALUES ('compacted', ?) ON CONFLICT(k) DO UPDATE SET v = MAX(v, excluded.v)")
        .run(upToIndex);
    })();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Commit whatever is queued so no acknowledged-in-flight append is lost.
    this.flush();
    this.closed = true;
    this.db.close();
  }

  private check(): void {
    if (this.closed) throw new LogError('LOG_CLOSED', 'log is closed');
  }
}
