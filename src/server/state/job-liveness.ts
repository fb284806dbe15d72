/**
 * Which jobs have live work: per job, the IDs of its non-terminal allocations and of its
 * non-terminal evaluations, kept as they are written. A job's status (job-status.ts) needs only
 * "is any allocation live, is any evaluation live", and every apply recomputes it for each job
 * it touched: reading the job's allocations to find out cost O(allocations of the job) per
 * apply — thousands of terminal ones for a job that has been rolled or rescheduled, on every
 * batch of client reports — and was the leader's largest synchronous cost in steady state.
 *
 * Both sets are CowIndexes, so a failed apply's undo log puts them back with the tables.
 */
import type { Allocation, Evaluation } from '../../structs/index.js';
import { isTerminalAlloc, isTerminalEvalStatus } from '../../structs/index.js';
import { CowIndex, type EpochClock } from './cow-table.js';

/** Live allocations and evaluations by job key; written with the tables, by the state store only. */
export class JobLiveness {
  private readonly allocs: CowIndex;
  private readonly evals: CowIndex;

  constructor(clock: EpochClock) {
    this.allocs = new CowIndex('idx_live_allocs_job', clock);
    this.evals = new CowIndex('idx_live_evals_job', clock);
  }

  /** Records that allocation `id` of job `key` is now `next` (undefined: deleted). */
  allocWritten(key: string, id: string, next: Allocation | undefined): void {
    if (next && !isTerminalAlloc(next)) this.allocs.add(key, id);
    else this.allocs.remove(key, id);
  }

  /** Records that evaluation `id` of job `key` is now `next` (undefined: deleted). */
  evalWritten(key: string, id: string, next: Evaluation | undefined): void {
    if (next && !isTerminalEvalStatus(next.Status)) this.evals.add(key, id);
    else this.evals.remove(key, id);
  }

  /** Whether job `key` has a non-terminal allocation now. */
  hasLiveAlloc(key: string): boolean {
    return this.allocs.get(key).size > 0;
  }

  /** Whether job `key` has a non-terminal evaluation now. */
  hasLiveEval(key: string): boolean {
    return this.evals.get(key).size > 0;
  }

  /** Forgets everything without recording history (restore from a snapshot only). */
  clearForRestore(): void {
    this.allocs.clearForRestore();
    this.evals.clearForRestore();
  }
}
