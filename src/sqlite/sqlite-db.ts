/**
 * The one way Caravan opens SQLite: libsql's better-sqlite3-compatible binding (prebuilt per
 * platform in npm packages, so `npm install` needs no compiler and no Node headers), with the
 * ways its API differs from better-sqlite3 handled here so no caller meets them:
 *  - rows from `get()` carry an extra `_metadata` field (timings): stripped, so nothing stores,
 *    serializes or compares it;
 *  - a single Buffer passed as the only bind parameter is taken for a named-parameter object and
 *    aborts the process: parameters are always handed over as one array;
 *  - BLOB columns come back as ArrayBuffer from `all()` but as Buffer from `get()`: both become
 *    Buffer;
 *  - `pragma(..., { simple: true })` returns a row instead of the value: pragmaValue reads it;
 *  - its `transaction()` always issues ROLLBACK after a failure, but SQLite itself rolls back on
 *    some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM): the ROLLBACK then throws "cannot
 *    rollback - no transaction is active" and that error replaces the cause. transaction() here
 *    rolls back only a transaction still open and always rethrows the first error.
 */
import Libsql from 'libsql';
import { mkdirSync } from 'node:fs';
import { createPrivateFileSync, PRIVATE_DIR_MODE } from '../fs/private-dir.js';
import { dirname } from 'node:path';

/** A value SQLite can bind. */
export type SqlParam = string | number | bigint | Buffer | null;
/** One result row, column name → value (BLOBs as Buffer). */
export type SqlRow = Record<string, unknown>;

/** Copies a row without libsql's `_metadata`, BLOBs as Buffer. */
function cleanRow(raw: unknown): SqlRow {
  const out: SqlRow = {};
  for (const [k, v] of Object.entries(raw as SqlRow)) {
    if (k === '_metadata') continue;
    out[k] = v instanceof ArrayBuffer ? Buffer.from(v) : v;
  }
  return out;
}

/** A prepared statement. */
export class SqlStatement {
  constructor(private readonly stmt: Libsql.Statement) {}

  /** Runs a statement that returns no rows; answers the number of rows changed. */
  run(...params: SqlParam[]): number {
    return this.stmt.run(params).changes;
  }

  /** The first row, or undefined. */
  get<T extends object = SqlRow>(...params: SqlParam[]): T | undefined {
    const row = this.stmt.get(params);
    return row === undefined ? undefined : (cleanRow(row) as T);
  }

  /** Every row. */
  all<T extends object = SqlRow>(...params: SqlParam[]): T[] {
    return this.stmt.all(params).map((r) => cleanRow(r) as T);
  }
}

/** How a database file is opened. */
export interface SqliteOpenOptions {
  /**
   * WAL journal with synchronous=FULL: a commit is fsynced before it returns, so neither a
   * killed process nor a power loss loses a write that had returned. Default true.
   */
  durable?: boolean;
  /**
   * How long a write waits for another connection's transaction to end before failing with
   * SQLITE_BUSY (libsql's default is not to wait). Set where two connections write one file.
   */
  busyTimeoutMs?: number;
}

/** One SQLite connection. */
export class SqliteDb {
  private constructor(private readonly db: Libsql.Database) {}

  /**
   * Opens (creating the file and its directory if needed) the database at path; ':memory:' for
   * none. The file is private to the agent's user (0600; a missing directory is made 0700), and
   * so are its WAL and shared-memory files, which SQLite creates with the database's mode.
   */
  static open(path: string, opts: SqliteOpenOptions = {}): SqliteDb {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
      createPrivateFileSync(path);
    }
    const db = new SqliteDb(new Libsql(path));
    if (opts.durable ?? true) {
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = FULL');
    }
    if (opts.busyTimeoutMs !== undefined) db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs))}`);
    return db;
  }

  get open(): boolean {
    return this.db.open;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  prepare(sql: string): SqlStatement {
    return new SqlStatement(this.db.prepare(sql));
  }

  /**
   * Runs fn in one transaction: committed if it returns, rolled back if it (or the commit)
   * throws; the error thrown is always the one that failed the transaction.
   */
  transaction<T>(fn: () => T): T {
    this.db.exec('BEGIN');
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      if (this.db.inTransaction) {
        try {
          this.db.exec('ROLLBACK');
        } catch {
          // The first error is the one worth reporting; SQLite ends the transaction either way.
        }
      }
      throw err;
    }
  }

  /** The current value of a pragma (e.g. 'journal_mode' → 'wal', 'synchronous' → 2). */
  pragmaValue(name: string): unknown {
    if (!/^[a-z_]+$/.test(name)) throw new Error(`pragma name: ${JSON.stringify(name)} is not a pragma`);
    const row = this.prepare(`PRAGMA ${name}`).get();
    return row === undefined ? undefined : Object.values(row)[0];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
