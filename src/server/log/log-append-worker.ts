/**
 * The SQLite log's append worker: its own durable connection to the log file, on which each
 * batch of entries is inserted and committed (fsync'd, synchronous=FULL) off the server's
 * thread — a commit waits on the disk for about a millisecond, during which the server keeps
 * scheduling instead of blocking. The backend acknowledges an append only after this worker
 * reports the commit, so a write is still acknowledged only once it is durable.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteDb } from '../../sqlite/sqlite-db.js';
import type { AppendReply, AppendRequest } from './log-append-protocol.js';
import { APPEND_BUSY_TIMEOUT_MS } from './log-appender.js';
import { insertLogBatch, prepareLogInsert } from './log-insert.js';

const port = parentPort!;
const db = SqliteDb.open((workerData as { path: string }).path, { busyTimeoutMs: APPEND_BUSY_TIMEOUT_MS });
const insert = prepareLogInsert(db);

port.on('message', (req: AppendRequest | 'close') => {
  if (req === 'close') {
    db.close();
    port.close();
    return;
  }
  let reply: AppendReply;
  try {
    insertLogBatch(db, insert, req.start, req.types, req.payloads);
    reply = { id: req.id, ok: true };
  } catch (err) {
    reply = { id: req.id, ok: false, message: (err as Error).message };
  }
  port.postMessage(reply);
});
