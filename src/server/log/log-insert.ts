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

/**
 * Whether `batch` is in the log as it was sent (every entry at its index, same type and payload):
 * what a batch whose commit was never answered is judged by. The committer writes a batch in one
 * transaction, so it is there whole or not at all; comparing the rows, not only the last index,
 * keeps another writer's rows at those indexes from passing for the batch.
 */
export function isLogBatchCommitted(db: SqliteDb, batch: LogBatch): boolean {
  const rows = db
    .prepare('SELECT idx, type, payload FROM log WHERE idx >= ? AND idx < ? ORDER BY idx')
    .all<{ idx: number; type: string; payload: string }>(batch.start, batch.start + batch.types.length);
  return rows.length === batch.types.length && rows.every((r, i) => r.idx === batch.start + i && r.type === batch.types[i] && r.payload === batch.payloads[i]);
}
