/**
 * Messages between the SQLite log backend and its append worker (log-append-worker.ts), over a
 * worker_threads port. One request at a time: entries `start`, `start + 1`, … in one transaction.
 */
export interface AppendRequest {
  id: number;
  start: number;
  types: string[];
  payloads: string[];
}

export type AppendReply = { id: number; ok: true } | { id: number; ok: false; message: string };
