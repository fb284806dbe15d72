/**
 * Snapshots of the state at a threshold of applied entries, then compaction of the log up to the
 * snapshot. Only the leader snapshots (`enabled`): the snapshot lives in the log backend, which is
 * shared storage on etcd, so one writer is enough and a follower never races the leader's
 * compaction; a follower that falls behind a compaction reloads the leader's snapshot (see
 * replicated-log.ts). On the embedded backend the single server is always the leader.
 */
import type pino from 'pino';
import type { LogBackend } from '../log/log-backend.js';
import { writeSnapshot, type SnapshotStats } from '../snapshot/snapshot-writer.js';
import type { StateStore } from '../state/state-store.js';
import { ServerError } from '../server-error.js';

export interface SnapshotterDeps {
  log: LogBackend;
  store: StateStore;
  /** The index the latest snapshot covers when the server opened. */
  lastSnapshotIndex: number;
  /** The index applied so far. */
  appliedIndex(): number;
  /** Whether this server writes snapshots now (the leader). */
  enabled(): boolean;
  /** Log entries between snapshots. Default 8192. */
  threshold?: number;
  rowsPerChunk?: number;
  logger?: pino.Logger;
  onSnapshot?: (stats: SnapshotStats) => void;
}

/** See the file comment. */
export class Snapshotter {
  private lastSnapshotIndex: number;
  /** The snapshot being written, if any; close() waits for it. */
  private task: Promise<SnapshotStats> | null = null;
  private closed = false;

  constructor(private readonly deps: SnapshotterDeps) {
    this.lastSnapshotIndex = deps.lastSnapshotIndex;
  }

  /** Starts a snapshot when a threshold of entries was applied since the last one. */
  maybeSnapshot(): void {
    const threshold = this.deps.threshold ?? 8192;
    if (this.task || this.closed || !this.deps.enabled() || this.deps.appliedIndex() - this.lastSnapshotIndex < threshold) return;
    void this.start().catch((err: unknown) => {
      if (!this.closed) this.deps.logger?.error({ err }, 'server: snapshot failed');
    });
  }

  /** The state was replaced by a snapshot at `index` (it counts as the last one taken). */
  loaded(index: number): void {
    this.lastSnapshotIndex = Math.max(this.lastSnapshotIndex, index);
  }

  /** Writes a snapshot of the current state now; resolves with its index. */
  async snapshotNow(): Promise<number> {
    // One at a time: wait out a snapshot in progress, then take one at the current index.
    while (this.task) await this.task.catch(() => undefined);
    if (this.closed) throw new ServerError('SERVER_CLOSED', {});
    return (await this.start()).index;
  }

  /** Stops taking snapshots; an unfinished one is aborted at its next chunk and awaited. */
  async close(): Promise<void> {
    this.closed = true;
    await this.task?.catch(() => undefined);
  }

  /**
   * Captures the state at the applied index and writes it in chunks, yielding between them;
   * compacts the log up to that index only once the snapshot is committed.
   */
  private start(): Promise<SnapshotStats> {
    const task = (async () => {
      let stats: SnapshotStats;
      try {
        stats = await writeSnapshot(this.deps.log, this.deps.store, {
          rowsPerChunk: this.deps.rowsPerChunk,
          shouldStop: () => this.closed,
        });
        await this.deps.log.compact(stats.index);
      } catch (err) {
        // A failed attempt waits another threshold of entries instead of retrying at once.
        this.lastSnapshotIndex = Math.max(this.lastSnapshotIndex, this.deps.appliedIndex());
        throw err;
      }
      this.lastSnapshotIndex = Math.max(this.lastSnapshotIndex, stats.index);
      this.deps.logger?.info({ ...stats }, 'server: snapshot committed');
      this.deps.onSnapshot?.(stats);
      return stats;
    })();
    const tracked = task.finally(() => {
      if (this.task !== tracked) return;
      this.task = null;
      // Entries applied while this one was written may already be another threshold's worth.
      this.maybeSnapshot();
    });
    this.task = tracked;
    return tracked;
  }
}
