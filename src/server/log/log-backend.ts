/**
 * The durable, ordered log of commands that every change to cluster state goes through.
 * Backends (embedded SQLite, etcd) implement LogBackend; the conformance suite in
 * test/server/log-conformance.ts runs against each of them.
 */
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';

/** One entry in the log: a command type and its serialized payload, at an index. */
export interface LogEntry {
  /** 1-based, strictly increasing, without gaps. */
  index: number;
  type: string;
  payload: string;
}

/** A serialized state snapshot covering every entry up to and including `index`. */
export interface LogSnapshot {
  index: number;
  data: Buffer;
}

/**
 * A snapshot being written chunk by chunk. Nothing of it is visible (loadLatestSnapshot and
 * openLatestSnapshot keep returning the previous one) until commit() resolves; a crash or
 * abort() before that leaves the previous snapshot in place and the written chunks are
 * discarded. The snapshot's data is the concatenation of its chunks in write order.
 */
export interface SnapshotSink {
  /** The log index the snapshot covers. */
  readonly index: number;
  /** Adds the next chunk; it need not be durable until commit(). */
  write(chunk: Buffer): Promise<void>;
  /** Makes every chunk durable and the snapshot the latest, atomically. */
  commit(): Promise<void>;
  /** Drops the chunks written so far; the snapshot never becomes visible. */
  abort(): Promise<void>;
}

/** A committed snapshot read back one chunk at a time, in write order. */
export interface SnapshotSource {
  index: number;
  chunks(): AsyncIterable<Buffer>;
}

/** How much storage a replicated log takes (etcd: its database, and the keys under the cluster's prefix). */
export interface LogStorageStatus {
  /** The store's own name for what it holds, e.g. the etcd prefix. */
  prefix: string;
  /** The database file: every page allocated, free ones included (what etcd's quota counts). */
  dbSizeBytes: number;
  /** The pages in use; the rest is reclaimed by a defragmentation. Absent where not reported. */
  dbSizeInUseBytes?: number;
  /** Keys under the prefix. */
  keys: number;
}

/** Entry to append: the backend assigns the index. */
export interface NewLogEntry {
  type: string;
  payload: string;
}

/** Error raised by a log backend; `code` says which failure. */
export type LogErrorCode =
  /** The backend was closed. */
  | 'LOG_CLOSED'
  /** The storage failed or is unreachable (etcd down, disk error); nothing was written. */
  | 'LOG_IO'
  /** This server no longer holds leadership (the fencing check failed); nothing was written. */
  | 'LOG_FENCED'
  /** The entries asked for were compacted away: load the latest snapshot, then read its tail. */
  | 'LOG_COMPACTED';

export class LogError extends CaravanError<LogErrorCode> {
  constructor(code: LogErrorCode, reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'LogError';
  }
}

/**
 * Receives committed entries in index order, without gaps, whoever appended them. `onError`
 * ends the subscription (LOG_COMPACTED when the subscriber fell behind a compaction, LOG_IO when
 * the backend can no longer deliver); nothing is delivered after it.
 */
export interface LogSubscriber {
  onEntries(entries: LogEntry[]): void;
  onError(err: LogError): void;
}

/**
 * A durable log. append() resolves only once the entries are durable (committed), with their
 * indexes in order; concurrent appends may be grouped into one durable write but keep call order.
 * A replicated backend (etcd) accepts appends only from the current leader: its fencing check
 * makes a deposed leader's append fail with LOG_FENCED and write nothing.
 */
export interface LogBackend {
  /** Appends entries; resolves with their assigned indexes once durable. */
  append(entries: NewLogEntry[]): Promise<number[]>;
  /**
   * Delivers every committed entry with index >= fromIndex, in order, to `subscriber` — those
   * appended by this process too (after their append is durable) — until the returned function
   * is called. This is what a server applies: it never applies an entry it has not seen here.
   */
  subscribe(fromIndex: number, subscriber: LogSubscriber): () => void;
  /** Entries with fromIndex <= index <= toIndex (toIndex defaults to the last), in order. */
  read(fromIndex: number, toIndex?: number): Promise<LogEntry[]>;
  /** The index of the last entry appended (0 when empty and never compacted). */
  lastIndex(): Promise<number>;
  /** Stores a snapshot of state at `index` durably. */
  saveSnapshot(index: number, data: Buffer): Promise<void>;
  /** The newest snapshot, or null. */
  loadLatestSnapshot(): Promise<LogSnapshot | null>;
  /**
   * Starts a snapshot at `index` written in chunks (see SnapshotSink). Optional: without it
   * the server joins the chunks and calls saveSnapshot.
   */
  beginSnapshot?(index: number): Promise<SnapshotSink>;
  /** The newest committed snapshot as chunks, or null. Optional, as beginSnapshot. */
  openLatestSnapshot?(): Promise<SnapshotSource | null>;
  /** The storage the log takes, where the backend can tell (etcd). Optional. */
  storageStatus?(): Promise<LogStorageStatus>;
  /** Drops entries with index <= upToIndex (they must be covered by a snapshot). */
  compact(upToIndex: number): Promise<void>;
  /** Flushes and releases resources; later calls fail with LOG_CLOSED. */
  close(): Promise<void>;
}
