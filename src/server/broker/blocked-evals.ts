/**
 * Blocked evaluations: evals that could not place everything wait here until capacity may have
 * appeared (a node registered, became ready or eligible, or allocations on a node finished),
 * then go back to the eval broker. One blocked eval per job: a newer one replaces the older,
 * which is handed to onCancel.
 */
import type { Evaluation } from '../../structs/index.js';

export interface BlockedEvalsConfig {
  /** Where unblocked evals go (the eval broker). */
  enqueue: (e: Evaluation) => void;
  /** Called with blocked evals superseded by a newer one of the same job. */
  onCancel?: (e: Evaluation) => void;
}

/** The set of blocked evaluations, one per job. */
export class BlockedEvals {
  private readonly byJob = new Map<string, Evaluation>();
  private enabled = true;
  /** The state index of the last unblock: an eval planned on an older snapshot missed it. */
  private lastUnblockIndex = 0;

  constructor(private readonly config: BlockedEvalsConfig) {}

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    if (!enabled) this.byJob.clear();
  }

  /**
   * Blocks an evaluation. If capacity changed after the snapshot it was planned on, it is
   * re-enqueued at once instead (otherwise it could wait forever for a change that passed).
   */
  block(e: Evaluation): void {
    if (!this.enabled) return;
    if (e.SnapshotIndex > 0 && e.SnapshotIndex < this.lastUnblockIndex) {
      this.config.enqueue(e);
      return;
    }
    const key = `${e.Namespace}\u0000${e.JobID}`;
    const prev = this.byJob.get(key);
    if (prev && prev.ID !== e.ID) {
      if (prev.CreateIndex > e.CreateIndex) {
        this.config.onCancel?.(e);
        return;
      }
      this.config.onCancel?.(prev);
    }
    this.byJob.set(key, e);
  }

  /** Removes the blocked eval of a job (job deregistered or a newer eval completed it). */
  untrackJob(namespace: string, jobId: string): Evaluation | undefined {
    const key = `${namespace}\u0000${jobId}`;
    const e = this.byJob.get(key);
    this.byJob.delete(key);
    return e;
  }

  /** Capacity may have changed at `index`: every blocked eval goes back to the broker. */
  unblock(index: number): number {
    this.lastUnblockIndex = Math.max(this.lastUnblockIndex, index);
    if (!this.enabled || this.byJob.size === 0) return 0;
    const evals = [...this.byJob.values()];
    this.byJob.clear();
    for (const e of evals) this.config.enqueue(e);
    return evals.length;
  }

  /** The blocked eval of a job, if any. */
  get(namespace: string, jobId: string): Evaluation | undefined {
    return this.byJob.get(`${namespace}\u0000${jobId}`);
  }

  size(): number {
    return this.byJob.size;
  }
}
