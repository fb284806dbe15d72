/**
 * Snapshots of the etcd log, stored in etcd: a snapshot's chunks are cut into pieces of at most
 * PIECE_BYTES (one put each, below etcd's request limit) under a key of their own id; the
 * snapshot becomes visible only when `snap/latest` names it, written under the leader's fence.
 * Each piece starts with a flag byte (1: the chunk continues in the next piece) so chunks read
 * back exactly as written. A snapshot is read at the revision its pointer was read at, so a
 * newer one committed (and old pieces deleted) meanwhile does not cut the read short. Pieces of
 * snapshots older than the previous one, and of abandoned ones, are deleted on commit.
 */
import { randomBytes } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { LogError, type LogSnapshot, type SnapshotSink, type SnapshotSource } from './log-backend.js';
import { pad, PIECE_BYTES, type EtcdFence, type EtcdLogKeys } from './etcd-log-keys.js';
import { etcdLogError } from './etcd-log-errors.js';

interface LatestPointer {
  index: number;
  id: string;
  pieces: number;
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
    this.fence();
    // The id sorts by index, so "every id below the previous snapshot's" is a key range.
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
          let off = 0;
          do {
            const end = Math.min(chunk.length, off + PIECE_BYTES - 1);
            const flag = Buffer.from([end < chunk.length ? 1 : 0]);
            await this.client.put(this.keys.snapshotPiece(id, piece)).value(Buffer.concat([flag, chunk.subarray(off, end)]));
            piece++;
            off = end;
          } while (off < chunk.length);
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
          const pointer: LatestPointer = { index, id, pieces: piece };
          const ops = [this.client.put(this.keys.snapLatest).value(JSON.stringify(pointer))];
          // Keep the previous snapshot (a reader may be streaming it); drop everything older.
          if (previous) ops.push(this.client.delete().inRange({ start: this.keys.snapChunks, end: this.keys.snapshotPieces(previous.pointer.id) }) as never);
          const res = await this.client.if(fence.key, 'Create', '==', fence.createRevision).then(...ops).commit();
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
          // Left behind: deleted with the older ones at the next commit.
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
            throw etcdLogError(err, `snapshot at ${pointer.index} read`);
          }
          if (kvs.length !== to - from) throw new LogError('LOG_IO', `snapshot at ${pointer.index}: pieces ${from}..${to - 1} missing`);
          for (const kv of kvs) {
            pending.push(kv.value.subarray(1));
            if (kv.value[0] === 0) {
              yield pending.length === 1 ? pending[0]! : Buffer.concat(pending);
              pending = [];
            }
          }
        }
        if (pending.length > 0) throw new LogError('LOG_IO', `snapshot at ${pointer.index}: last chunk incomplete`);
      },
    };
  }

  private async readPointer(): Promise<{ pointer: LatestPointer; revision: string } | null> {
    const res = await this.client.get(this.keys.snapLatest).exec();
    const kv = res.kvs[0];
    if (!kv) return null;
    return { pointer: JSON.parse(kv.value.toString()) as LatestPointer, revision: res.header.revision };
  }
}
