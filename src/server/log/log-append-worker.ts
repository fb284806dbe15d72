/**
 * The SQLite log's append worker: its own durable connection to the log file, on which batches
 * of entries are inserted and committed (fsync'd, synchronous=FULL) off the server's thread — a
 * commit waits on the disk, during which the server keeps scheduling instead of blocking. The
 * backend acknowledges an append only after this worker reports the commit, so a write is still
 * acknowledged only once it is durable.
 *
 * The backend sends each batch as soon as it has one, without waiting for the commit in flight.
 * When a commit ends, every batch that arrived meanwhile is taken off the port at once
 * (`receiveMessageOnPort`) and committed in one transaction: the next commit does not wait for
 * the server's thread to be scheduled, read the answer and send the next batch (on a loaded
 * machine each of those hops waits for a core), and writers arriving during a commit still share
 * one fsync. Batches must follow each other: one that does not start where the last commit
 * ended (it was sent behind a batch that failed) is refused, so the log has no gap.
 *
 * If this thread dies between a commit and its answer, the backend finds the batch in the log
 * file and acknowledges it (WorkerAppender). The test hooks (AppendWorkerTesting, set only by
 * tests building the appender themselves) die at that moment on purpose and count the batches
 * taken, so a test knows what the commit it dies after holds.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { SqliteDb } from '../../sqlite/sqlite-db.js';
import type { AppendReply, AppendRequest } from './log-append-protocol.js';
import { APPEND_BUSY_TIMEOUT_MS, type AppendWorkerTesting } from './log-appender.js';
import { insertLogBatches, prepareLogInsert } from './log-insert.js';

const port = parentPort!;
const data = workerData as { path: string } & AppendWorkerTesting;
const db = SqliteDb.open(data.path, { busyTimeoutMs: APPEND_BUSY_TIMEOUT_MS });
const insert = prepareLogInsert(db);
/** Where the next batch must start: after the last commit (null until the first batch). */
let expected: number | null = null;
let commits = 0;

/** Commits the batches that follow on from `expected` in one transaction; answers every one, in order. */
function commit(requests: AppendRequest[]): void {
  const accepted: AppendRequest[] = [];
  const replies: AppendReply[] = [];
  let at = expected ?? requests[0]?.start ?? 0;
  for (const req of requests) {
    if (req.start !== at) {
      replies.push({ id: req.id, ok: false, message: `entries from index ${req.start} were sent behind a failed append (the log ends before ${at})` });
      continue;
    }
    accepted.push(req);
    at = req.start + req.types.length;
  }
  if (accepted.length > 0) {
    expected ??= accepted[0]!.start;
    try {
      insertLogBatches(db, insert, accepted);
      expected = at;
      if (++commits === data.exitAfterCommits) process.exit(1);
      for (const req of accepted) replies.push({ id: req.id, ok: true });
    } catch (err) {
      for (const req of accepted) replies.push({ id: req.id, ok: false, message: (err as Error).message });
    }
  }
  replies.sort((a, b) => a.id - b.id);
  for (const r of replies) port.postMessage(r);
}

port.on('message', (first: AppendRequest | 'close') => {
  const requests: AppendRequest[] = [];
  let closing = false;
  for (let m: AppendRequest | 'close' | undefined = first; m !== undefined; m = (receiveMessageOnPort(port)?.message as AppendRequest | 'close' | undefined)) {
    if (m === 'close') {
      closing = true;
      break;
    }
    requests.push(m);
  }
  if (data.taken) Atomics.add(data.taken, 0, requests.length);
  if (requests.length > 0) commit(requests);
  if (closing) {
    db.close();
    port.close();
  }
});
