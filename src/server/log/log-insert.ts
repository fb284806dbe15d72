/**
 * How batches of log entries are written: one INSERT per entry in one transaction, indexes
 * start, start + 1, …. Shared by the append worker and the inline appender of in-memory logs.
 */
import type { SqliteDb, SqlStatement } from '../../sqlite/sqlite-db.js';

export function prepareLogInsert(db: SqliteDb): SqlStatement {
  return db.prepare('INSERT INTO log (idx, type, payload) VALUES (?, ?, ?)');
}

/** One batch: entries (types[i], payloads[i]) at start + i. */
export interface LogBatch {
  start: number;
  types: string[];
  payloads: string[];
}

/** Commits several batches in one transaction (one fsync); nothing is written if one fails. */
export function insertLogBatches(db: SqliteDb, insert: SqlStatement, batches: LogBatch[]): void {
  db.transaction(() => {
    for (const b of batches) for (let i = 0; i < b.types.length; i++) insert.run(b.start + i, b.types[i]!, b.payloads[i]!);
  });
}
