/**
 * Snapshots of the etcd log, stored in etcd: each chunk is compressed (deflate: the state's JSON
 * lines shrink several times over, and etcd's database holds every byte written until its
 * history is compacted), then cut into pieces of at most PIECE_BYTES (one put each, below
 * etcd's request limit) under a key of the snapshot's id. The snapshot becomes visible only when
 * `snap/latest` names it, written under the leader's fence. Each piece starts with a flag byte
 * (1: the chunk continues in the next piece) so chunks read back exactly as written.
 *
 * Only the latest complete snapshot is kept: its commit deletes every other snapshot's pieces —
 * the one it supersedes and any left partial by a writer that died (a leader killed, etcd gone
 * mid-write) — and begin() deletes partial ones before writing, so they do not linger while a
 * new one is written. A snapshot is read at the revision its pointer was read at, so a newer one
 * committed meanwhile does not change what the read sees — until the history behind the new
 * snapshot is compacted (see EtcdLogBackend.compact): the read then fails with LOG_COMPACTED and
 * the reader starts again on the new latest (loadLatestSnapshot does).
 */
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import type { Etcd3 } from 'etcd3';
import { LogError, type LogSnapshot, type SnapshotSink, type SnapshotSource } from './log-backend.js';
import { pad, PIECE_BYTES, type EtcdFence, type EtcdLogKeys } from './etcd-log-keys.js';
import { etcdLogError, isEtcdCompactedError } from './etcd-log-errors.js';

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);
/** zlib's fastest level: most of the gain on repetitive JSON at a fraction of the CPU (on libuv's pool, off the event loop). */
const DEFLATE_LEVEL = 1;

interface LatestPointer {
  index: number;
  id: string;
  pieces: number;
  /** How each chunk was stored; absent in snapshots of earlier versions (stored as written). */
  encoding?: 'deflate';
}

/** A committed snapshot: where it is, and the etcd revision its commit made. */
export interface CommittedSnapshot {
  index: number;
  revision: string;
}

export class EtcdSnapshotStore {
  constructor(
    private readonly client: Etcd3,
    private readonly keys: EtcdLogKeys,
    private readonly fence: () => EtcdFence,
    private readonly check: () => void,
  ) {}

  async save(index: number, data: Buffer): Promise<void> {
    const sink = await this.begin(index);
    try {
      await sink.write(data);
      await sink.commit();
    } catch (err) {
      await sink.abort().catch(() => undefined);
      throw err;
    }
  }

  async loadLatest(): Promise<LogSnapshot | null> {
    const src = await this.openLatest();
    if (!src) return null;
    const parts: Buffer[] = [];
    for await (const c of src.chunks()) parts.push(c);
    return { index: src.index, data: parts.length === 1 ? parts[0]! : Buffer.concat(parts) };
  }

  async begin(index: number): Promise<SnapshotSink> {
    // Only the leader writes snapshots: a follower learns it here, before writing anything.
    const beginFence = this.fence();
    // Pieces of snapshots that never committed go now, not only at the next commit.
    try {
      await this.deleteAllBut(beginFence, (await this.readPointer())?.pointer.id ?? null);
    } catch (err) {
      throw etcdLogError(err, 'snapshot begin');
    }
    // The id sorts by index (readable in etcdctl); uniqueness comes from the random part.
    const id = `${pad(index)}-${randomBytes(6).toString('hex')}`;
    let piece = 0;
    let finished = false;
    const guard = (what: string): void => {
      this.check();
      if (finished) throw new LogError('LOG_IO', `snapshot at ${index}: ${what} after commit or abort`);
    };
    return {
      index,
      write: async (chunk) => {
        guard('write');
        try {
          const stored = await deflate(chunk, { level: DEFLATE_LEVEL });
          let off = 0;
          do {
            const end = Math.min(stored.length, off + PIECE_BYTES - 1);
            const flag = Buffer.from([end < stored.length ? 1 : 0]);
            await this.client.put(this.keys.snapshotPiece(id, piece)).value(Buffer.concat([flag, stored.subarray(off, end)]));
            piece++;
            off = end;
          } while (off < stored.length);
        } catch (err) {
          throw etcdLogError(err, 'snapshot write');
        }
      },
      commit: async () => {
        guard('commit');
        const fence = this.fence();
        try {
          const previous = await this.readPointer();
          if (previous && previous.pointer.index > index) {
            // A newer snapshot is already the latest: this one is not needed.
            finished = true;
            await this.client.delete().prefix(this.keys.snapshotPieces(id));
            return;
          }
          const pointer: LatestPointer = { index, id, pieces: piece, encoding: 'deflate' };
          const res = await this.client
            .if(fence.key, 'Create', '==', fence.createRevision)
            .then(this.client.put(this.keys.snapLatest).value(JSON.stringify(pointer)), ...this.deleteOthers(id))
            .commit();
          if (!res.succeeded) throw new LogError('LOG_FENCED', 'leadership was lost; the snapshot was not committed');
          finished = true;
        } catch (err) {
          throw etcdLogError(err, 'snapshot commit');
        }
      },
      abort: async () => {
        if (finished) return;
        finished = true;
        try {
          await this.client.delete().prefix(this.keys.snapshotPieces(id));
        } catch {
          // Left behind: deleted by the next snapshot's begin or commit.
        }
      },
    };
  }

  async openLatest(): Promise<SnapshotSource | null> {
    let found: { pointer: LatestPointer; revision: string } | null;
    try {
      found = await this.readPointer();
    } catch (err) {
      throw etcdLogError(err, 'snapshot read');
    }
    if (!found) return null;
    const { pointer, revision } = found;
    const client = this.client;
    const keys = this.keys;
    const check = this.check;
    const decode = pointer.encoding === 'deflate' ? (b: Buffer) => inflate(b) : async (b: Buffer) => b;
    return {
      index: pointer.index,
      async *chunks() {
        let pending: Buffer[] = [];
        // A few pieces per request: bounded memory, few round trips.
        const PAGE = 8;
        for (let from = 0; from < pointer.pieces; from += PAGE) {
          check();
          const to = Math.min(pointer.pieces, from + PAGE);
          let kvs;
          try {
            const res = await client
              .getAll()
              .inRange({ start: keys.snapshotPiece(pointer.id, from), end: keys.snapshotPiece(pointer.id, to) })
              .sort('Key', 'Ascend')
              .revision(revision)
              .exec();
            kvs = res.kvs;
          } catch (err) {
            if (isEtcdCompactedError(err)) {
              throw new LogError('LOG_COMPACTED', `snapshot at ${pointer.index} was superseded while it was read; read the latest again`, { cause: err });
            }
            throw etcdLogError(err, `snapshot at ${pointer.index} read`);
          }
          if (kvs.length !== to - from) throw new LogError('LOG_IO', `snapshot at ${pointer.index}: pieces ${from}..${to - 1} missing`);
          for (const kv of kvs) {
            pending.push(kv.value.subarray(1));
            if (kv.value[0] === 0) {
              const stored = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
              pending = [];
              try {
                yield await decode(stored);
              } catch (err) {
                if (err instanceof LogError) throw err;
                throw new LogError('LOG_IO', `snapshot at ${pointer.index}: a chunk does not inflate (${(err as Error).message})`, { cause: err });
              }
            }
          }
        }
        if (pending.length > 0) throw new LogError('LOG_IO', `snapshot at ${pointer.index}: last chunk incomplete`);
      },
    };
  }

  /** Deletes, under the fence, the pieces of every snapshot but `keep` (null: but none). */
  private async deleteAllBut(fence: EtcdFence, keep: string | null): Promise<void> {
    const ops = keep ? this.deleteOthers(keep) : [this.client.delete().prefix(this.keys.snapChunks)];
    const res = await this.client.if(fence.key, 'Create', '==', fence.createRevision).then(...ops).commit();
    if (!res.succeeded) throw new LogError('LOG_FENCED', 'leadership was lost; no snapshot was written');
  }

  /** Deletions of every piece key except those of snapshot `id`: the ranges below and above it. */
  private deleteOthers(id: string): never[] {
    const own = this.keys.snapshotPieces(id);
    return [
      this.client.delete().inRange({ start: this.keys.snapChunks, end: own }),
      this.client.delete().inRange({ start: rangeEnd(own), end: rangeEnd(this.keys.snapChunks) }),
    ] as never[];
  }

  private async readPointer(): Promise<{ pointer: LatestPointer; revision: string } | null> {
    const res = await this.client.get(this.keys.snapLatest).exec();
    const kv = res.kvs[0];
    if (!kv) return null;
    return { pointer: JSON.parse(kv.value.toString()) as LatestPointer, revision: res.header.revision };
  }
}

/** The first key after every key starting with `prefix` (its last byte + 1; prefixes here end in '/'). */
function rangeEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}
