/**
 * Messages between the SQLite log backend and its append worker (log-append-worker.ts), over a
 * worker_threads port. Each request holds entries `start`, `start + 1`, …; the backend sends one
 * without waiting for the answers to those before it, and the worker answers each, in order.
 */
export interface AppendRequest {
  id: number;
  start: number;
  types: string[];
  payloads: string[];
}

export type AppendReply = { id: number; ok: true } | { id: number; ok: false; message: string };
