/**
 * How a batch of log entries is written: one INSERT per entry in one transaction, indexes
 * start, start + 1, …. Shared by the append worker and the inline appender of in-memory logs.
 */
import type { SqliteDb, SqlStatement } from '../../sqlite/sqlite-db.js';

export function prepareLogInsert(db: SqliteDb): SqlStatement {
  return db.prepare('INSERT INTO log (idx, type, payload) VALUES (?, ?, ?)');
}

/** Commits the entries (types[i], payloads[i]) at start + i; nothing is written if one fails. */
export function insertLogBatch(db: SqliteDb, insert: SqlStatement, start: number, types: string[], payloads: string[]): void {
  db.transaction(() => {
    for (let i = 0; i < types.length; i++) insert.run(start + i, types[i]!, payloads[i]!);
  });
}
