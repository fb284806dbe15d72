/**
 * The replicated log backend: log entries are etcd keys under the cluster prefix (see
 * etcd-log-keys.ts), appended only by the leader in a transaction that checks
 *   - the fence: this server's election key still exists with the create revision it led with
 *     (it goes only with its lease, and no other server leads while it exists), so a deposed
 *     leader (its lease lapsed, another server elected) writes nothing — LOG_FENCED;
 *   - that the next index key does not exist yet, so a stale idea of the next index can never
 *     overwrite or leave a gap.
 * Appends arriving while a transaction is in flight are grouped into the next one, in call
 * order. An entry too large for one etcd request is written as parts first (under the same
 * fence), its index key last, so it becomes visible whole or not at all. Every server —
 * the leader too — applies what subscribe() delivers (a range read, then an etcd watch).
 */
import { randomBytes } from 'node:crypto';
import type { Etcd3, IOperation } from 'etcd3';
import {
  LogError,
  type LogBackend,
  type LogEntry,
  type LogSnapshot,
  type LogStorageStatus,
  type LogSubscriber,
  type NewLogEntry,
  type SnapshotSink,
  type SnapshotSource,
} from './log-backend.js';
import { decodeEntry, encodeEntry, EtcdLogKeys, READ_PAGE, TXN_MAX_BYTES, TXN_MAX_OPS, type EncodedEntry, type EtcdFence } from './etcd-log-keys.js';
import { EtcdLogSubscription } from './etcd-log-subscription.js';
import { EtcdSnapshotStore } from './etcd-snapshot-store.js';
import { etcdLogError, isEtcdCompactedError } from './etcd-log-errors.js';
import type { EtcdWatch } from '../etcd/etcd-watch.js';

export interface EtcdLogBackendOptions {
  client: Etcd3;
  /** The cluster prefix ("/caravan/"). */
  prefix: string;
  /** The current fence, or null while this server is not the leader (appends fail LOG_FENCED). */
  fence: () => EtcdFence | null;
  /** Called once by close() (the owner of the shared client closes it when all users are done). */
  onClose?: () => void;
  /** Opens the subscriptions' watches (tests substitute one whose stream they drive). Default EtcdWatch.open. */
  openWatch?: typeof EtcdWatch.open;
}

interface PendingAppend {
  entries: NewLogEntry[];
  encoded: EncodedEntry[];
  resolve: (idx: number[]) => void;
  reject: (err: unknown) => void;
}

type WriteOutcome = 'ok' | 'fenced' | 'stale';

export class EtcdLogBackend implements LogBackend {
  readonly keys: EtcdLogKeys;
  private readonly client: Etcd3;
  private readonly fence: () => EtcdFence | null;
  private readonly openWatch: typeof EtcdWatch.open | undefined;
  private readonly onClose: (() => void) | undefined;
  private readonly snapshots: EtcdSnapshotStore;
  private closed = false;
  private queue: PendingAppend[] = [];
  /** The flush loop while it runs (close waits for it). */
  private flushing: Promise<void> | null = null;
  /** The next index to write, or null when it must be read from etcd first. */
  private next: number | null = null;
  /**
   * The fence `next` was learned under. Another term may have written and compacted past it
   * (so the key at `next` is absent again): a new fence always reads the end afresh.
   */
  private nextFence: string | null = null;
  private readonly subscriptions = new Set<EtcdLogSubscription>();

  constructor(options: EtcdLogBackendOptions) {
    this.client = options.client;
    this.keys = new EtcdLogKeys(options.prefix);
    this.fence = options.fence;
    this.openWatch = options.openWatch;
    this.onClose = options.onClose;
    this.snapshots = new EtcdSnapshotStore(this.client, this.keys, () => this.requireFence('snapshot'), () => this.check());
  }

  append(entries: NewLogEntry[]): Promise<number[]> {
    if (this.closed) return Promise.reject(new LogError('LOG_CLOSED', 'log is closed'));
    if (entries.length === 0) return Promise.resolve([]);
    let encoded: EncodedEntry[];
    try {
      encoded = entries.map((e) => encodeEntry(e.type, e.payload));
    } catch (err) {
      return Promise.reject(new LogError('LOG_IO', `log entry not encodable: ${(err as Error).message}`, { cause: err }));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ entries, encoded, resolve, reject });
      // Appends issued in this turn of the event loop, and while a write is in flight, share one txn.
      if (!this.flushing) this.flushing = new Promise((r) => setImmediate(r)).then(() => this.flushLoop());
    });
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.writeBatch(this.takeBatch());
    } finally {
      this.flushing = null;
    }
  }

  /** The longest prefix of the queue that fits one transaction (at least one call). */
  private takeBatch(): PendingAppend[] {
    let ops = 1; // the write marker
    let bytes = 0;
    let n = 0;
    for (const p of this.queue) {
      const pOps = p.encoded.length;
      const pBytes = p.encoded.reduce((s, e) => s + ('inline' in e ? e.inline.length : e.header.length), 0);
      if (n > 0 && (ops + pOps > TXN_MAX_OPS || bytes + pBytes > TXN_MAX_BYTES)) break;
      ops += pOps;
      bytes += pBytes;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async writeBatch(batch: PendingAppend[]): Promise<void> {
    const fence = this.fence();
    if (!fence) {
      const err = new LogError('LOG_FENCED', 'this server is not the leader');
      for (const p of batch) p.reject(err);
      return;
    }
    const encoded = batch.flatMap((p) => p.encoded);
    let outcome: WriteOutcome;
    let start: number;
    if (this.nextFence !== fence.createRevision) this.next = null;
    this.nextFence = fence.createRevision;
    try {
      start = this.next ?? (await this.readLastIndex()) + 1;
      outcome = await this.write(fence, start, encoded);
      if (outcome === 'stale') {
        // Another term of ours (or a restart) wrote meanwhile: learn the real end and try once more.
        start = (await this.readLastIndex()) + 1;
        outcome = await this.write(fence, start, encoded);
      }
    } catch (err) {
      // Whether an unanswered txn committed is unknown: read the end again before the next write.
      this.next = null;
      const e = etcdLogError(err, 'log append');
      for (const p of batch) p.reject(e);
      return;
    }
    if (outcome !== 'ok') {
      this.next = null;
      const e =
        outcome === 'fenced'
          ? new LogError('LOG_FENCED', 'leadership was lost (the election key is gone); nothing was written')
          : new LogError('LOG_IO', 'the log changed under the leader; nothing was written');
      for (const p of batch) p.reject(e);
      return;
    }
    this.next = start + encoded.length;
    const committed: LogEntry[] = [];
    let idx = start;
    for (const p of batch) {
      const out: number[] = [];
      for (const e of p.entries) {
        committed.push({ index: idx, type: e.type, payload: e.payload });
        out.push(idx++);
      }
      p.resolve(out);
    }
    // Local subscribers get the entries now; the watch brings them again and they are skipped.
    for (const s of this.subscriptions) s.offer(committed);
  }

  /** Writes the parts of large entries, then the index keys, all under the fence. */
  private async write(fence: EtcdFence, start: number, encoded: EncodedEntry[]): Promise<WriteOutcome> {
    // Parts first: invisible until their index key exists, overwritten if this write is retried.
    let ops: IOperation[] = [];
    let bytes = 0;
    const flushParts = async (): Promise<boolean> => {
      if (ops.length === 0) return true;
      const res = await this.client.if(fence.key, 'Create', '==', fence.createRevision).then(...ops).commit();
      ops = [];
      bytes = 0;
      return res.succeeded;
    };
    for (let i = 0; i < encoded.length; i++) {
      const e = encoded[i]!;
      if ('inline' in e) continue;
      for (let k = 0; k < e.parts.length; k++) {
        const part = e.parts[k]!;
        if (ops.length > 0 && (bytes + part.length > TXN_MAX_BYTES || ops.length >= TXN_MAX_OPS)) {
          if (!(await flushParts())) return 'fenced';
        }
        ops.push(this.client.put(this.keys.part(start + i, k)).value(part));
        bytes += part.length;
      }
    }
    if (!(await flushParts())) return 'fenced';
    // Index keys, in groups of at most TXN_MAX_OPS - 1 (only a single huge call needs several).
    for (let from = 0; from < encoded.length; from += TXN_MAX_OPS - 1) {
      const group = encoded.slice(from, from + TXN_MAX_OPS - 1);
      const first = start + from;
      // A marker tells a retried txn (the answer to the first was lost) that it already committed.
      const nonce = randomBytes(12).toString('hex');
      const puts = group.map((e, j) => this.client.put(this.keys.entry(first + j)).value('inline' in e ? e.inline : e.header));
      const res = await this.client
        .if(fence.key, 'Create', '==', fence.createRevision)
        .and(this.keys.entry(first), 'Create', '==', 0)
        .then(...puts, this.client.put(this.keys.writeMarker).value(nonce))
        .else(this.client.get(fence.key), this.client.get(this.keys.writeMarker))
        .commit();
      if (res.succeeded) continue;
      const leaderKv = res.responses[0]?.response_range.kvs[0];
      if (!leaderKv || leaderKv.create_revision !== fence.createRevision) return 'fenced';
      const marker = res.responses[1]?.response_range.kvs[0];
      if (marker && marker.value.toString() === nonce) continue;
      return 'stale';
    }
    return 'ok';
  }

  subscribe(fromIndex: number, subscriber: LogSubscriber): () => void {
    const sub = new EtcdLogSubscription({
      client: this.client,
      keys: this.keys,
      fromIndex: Math.max(1, fromIndex),
      subscriber,
      readPage: (from, rev) => this.readPage(from, Number.MAX_SAFE_INTEGER, rev),
      resolve: (index, value, rev) => this.resolveEntry(index, value, rev),
      compactedIndex: () => this.compactedIndex(),
      onEnd: (s) => this.subscriptions.delete(s),
      ...(this.openWatch ? { openWatch: this.openWatch } : {}),
    });
    this.subscriptions.add(sub);
    if (this.closed) {
      queueMicrotask(() => sub.fail(new LogError('LOG_CLOSED', 'log is closed')));
    } else {
      sub.start();
    }
    return () => sub.stop();
  }

  async read(fromIndex: number, toIndex?: number): Promise<LogEntry[]> {
    this.check();
    const to = toIndex ?? Number.MAX_SAFE_INTEGER;
    const out: LogEntry[] = [];
    let from = Math.max(1, fromIndex);
    let revision: string | undefined;
    try {
      while (from <= to) {
        const page = await this.readPage(from, to, revision);
        revision = page.revision;
        out.push(...page.entries);
        if (!page.more) break;
        from = page.entries[page.entries.length - 1]!.index + 1;
      }
    } catch (err) {
      throw etcdLogError(err, 'log read');
    }
    return out;
  }

  /** Up to READ_PAGE entries from..to at one etcd revision (the latest when not given). */
  private async readPage(from: number, to: number, revision?: string): Promise<{ entries: LogEntry[]; revision: string; more: boolean }> {
    const end = to >= Number.MAX_SAFE_INTEGER ? this.keys.entriesEnd : this.keys.entry(to + 1);
    let q = this.client.getAll().inRange({ start: this.keys.entry(from), end }).sort('Key', 'Ascend').limit(READ_PAGE);
    if (revision) q = q.revision(revision);
    const res = await q.exec();
    const rev = revision ?? res.header.revision;
    const entries: LogEntry[] = [];
    for (const kv of res.kvs) {
      const index = this.keys.indexOf(kv.key.toString());
      entries.push(await this.resolveEntry(index, kv.value, rev));
    }
    return { entries, revision: rev, more: res.more };
  }

  /** Decodes an entry's value, fetching its parts (at `revision`) when it has them. */
  private async resolveEntry(index: number, value: Buffer, revision: string): Promise<LogEntry> {
    const d = decodeEntry(value);
    if ('payload' in d) return { index, type: d.type, payload: d.payload };
    const res = await this.client.getAll().prefix(this.keys.partsOf(index)).sort('Key', 'Ascend').revision(revision).exec();
    const parts = res.kvs.slice(0, d.parts).map((kv) => kv.value);
    if (parts.length !== d.parts) throw new LogError('LOG_IO', `log entry ${index}: ${parts.length} of ${d.parts} parts found`);
    return { index, type: d.type, payload: Buffer.concat(parts).toString('utf8') };
  }

  async lastIndex(): Promise<number> {
    this.check();
    try {
      return await this.readLastIndex();
    } catch (err) {
      throw etcdLogError(err, 'log read');
    }
  }

  private async readLastIndex(): Promise<number> {
    const [keys, compacted] = await Promise.all([
      this.client.getAll().prefix(this.keys.entries).sort('Key', 'Descend').limit(1).keys(),
      this.compactedIndex(),
    ]);
    const last = keys.length > 0 ? this.keys.indexOf(keys[0]!) : 0;
    return Math.max(Number.isFinite(last) ? last : 0, compacted);
  }

  private async compactedIndex(): Promise<number> {
    const v = await this.client.get(this.keys.compacted).string();
    return v ? Number(v) : 0;
  }

  saveSnapshot(index: number, data: Buffer): Promise<void> {
    this.check();
    return this.snapshots.save(index, data);
  }

  loadLatestSnapshot(): Promise<LogSnapshot | null> {
    this.check();
    return this.snapshots.loadLatest();
  }

  beginSnapshot(index: number): Promise<SnapshotSink> {
    this.check();
    return this.snapshots.begin(index);
  }

  openLatestSnapshot(): Promise<SnapshotSource | null> {
    this.check();
    return this.snapshots.openLatest();
  }

  /**
   * Deletes entries (and parts) up to upToIndex under the fence, records the compacted index,
   * then compacts etcd's history up to that deletion: what the log and the snapshots deleted
   * (entries, the superseded snapshot's pieces) leaves etcd's database, so its size follows the
   * live state instead of growing with every write ever made. Called after a snapshot commits.
   * Readers pinned to an older revision (a snapshot being streamed, a catch-up read) fail with
   * "compacted" and start again on the latest; a watch already streaming is not affected.
   */
  async compact(upToIndex: number): Promise<void> {
    this.check();
    const fence = this.requireFence('compaction');
    try {
      const current = await this.compactedIndex();
      const res = await this.client
        .if(fence.key, 'Create', '==', fence.createRevision)
        .then(
          this.client.delete().inRange({ start: this.keys.entries, end: this.keys.entry(upToIndex + 1) }),
          this.client.delete().inRange({ start: this.keys.parts, end: this.keys.partsOf(upToIndex + 1) }),
          this.client.put(this.keys.compacted).value(String(Math.max(current, upToIndex))),
        )
        .commit();
      if (!res.succeeded) throw new LogError('LOG_FENCED', 'leadership was lost (the election key is gone); nothing was compacted');
      await this.compactHistory(res.header.revision);
    } catch (err) {
      throw etcdLogError(err, 'log compaction');
    }
  }

  private async compactHistory(revision: string): Promise<void> {
    try {
      await this.client.kv.compact({ revision });
    } catch (err) {
      // Already compacted further (another leader did it, or etcd's auto-compaction): nothing to do.
      if (!isEtcdCompactedError(err)) throw err;
    }
  }

  /**
   * etcd's own figures for its database (its Status call, answered by the member this client
   * talks to) and the number of keys under this cluster's prefix.
   */
  async storageStatus(): Promise<LogStorageStatus> {
    this.check();
    try {
      const [status, keys] = await Promise.all([
        this.client.maintenance.status(),
        this.client.getAll().prefix(this.keys.prefix).count(),
      ]);
      const inUse = (status as { dbSizeInUse?: string }).dbSizeInUse;
      return {
        prefix: this.keys.prefix,
        dbSizeBytes: Number(status.dbSize),
        // etcd before 3.4 does not report it.
        ...(inUse !== undefined && inUse !== null ? { dbSizeInUseBytes: Number(inUse) } : {}),
        keys,
      };
    } catch (err) {
      throw etcdLogError(err, 'etcd status');
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Write whatever is queued, so no append in flight is dropped.
    while (this.flushing) await this.flushing;
    this.closed = true;
    for (const s of [...this.subscriptions]) s.stop();
    this.subscriptions.clear();
    this.onClose?.();
  }

  private requireFence(what: string): EtcdFence {
    const f = this.fence();
    if (!f) throw new LogError('LOG_FENCED', `this server is not the leader; ${what} refused`);
    return f;
  }

  private check(): void {
    if (this.closed) throw new LogError('LOG_CLOSED', 'log is closed');
  }
}
