/**
 * The server side of clients' allocation reports, batched as Nomad's Node.UpdateAlloc batches
 * them — but only under load: a report that arrives while no batch is being applied goes into
 * the log at once (with whatever else was submitted in the same turn of the event loop), and the
 * reports that arrive while a batch is being applied gather for one window
 * (ALLOC_UPDATE_BATCH_MS) and go into the log as one AllocClientUpdate entry. So a quiet
 * cluster's task start is not held up by a window (a start reports twice, pending then running,
 * and each waited the whole window), while 10,000 clients reporting task states — the leader
 * always busy applying — still cost the log (and every follower, and every watcher woken by the
 * apply) one entry per window rather than one per report. Each caller is answered only once the
 * entry holding its report is durable and applied, with that entry's index — or with the
 * entry's error: a batch is applied whole or not at all, and every caller in it learns the
 * outcome (clients retry their reports).
 */
import type { Clock, Timer } from '../../time/clock.js';
import type { AllocClientUpdate } from '../../structs/alloc.js';
import type { Evaluation } from '../../structs/index.js';
import type { AllocClientUpdateCommand } from '../fsm/commands.js';

/**
 * The window under load. Nomad's batchUpdateInterval is 50 ms; Caravan waits 5 ms, and only
 * while an earlier batch is being applied: 50 ms cost every task start ~100 ms (submit → running
 * went from 10 to 123 ms), while 5 ms still gathers a busy cluster's reports — thousands a
 * second — into a few hundred entries a second.
 */
export const ALLOC_UPDATE_BATCH_MS = 5;

export interface AllocUpdateBatcherConfig {
  clock: Clock;
  /** Proposes the batch's command; resolves with its index once durable and applied. */
  apply: (cmd: AllocClientUpdateCommand) => Promise<number>;
  /** The clock in Unix nanoseconds, as commands carry it. */
  nowNanos: () => number;
  /** The window (ms) reports wait for others to join them while a batch is being applied. Default ALLOC_UPDATE_BATCH_MS. */
  windowMs?: number;
}

interface Pending {
  allocs: AllocClientUpdate[];
  evals: Evaluation[];
  waiters: { resolve: (index: number) => void; reject: (err: unknown) => void }[];
  /** The window's timer; null for a batch opened while idle (flushed at the end of the turn). */
  timer: Timer | null;
}

/** Collects admitted reports (for one window when busy), then applies them as one log entry. */
export class AllocUpdateBatcher {
  private pending: Pending | undefined;
  private readonly windowMs: number;
  private batches = 0;
  /** Batches proposed and not yet durable and applied. */
  private applying = 0;

  constructor(private readonly config: AllocUpdateBatcherConfig) {
    this.windowMs = config.windowMs ?? ALLOC_UPDATE_BATCH_MS;
  }

  /**
   * Adds reports (already authenticated and admitted) and the evaluations they call for to the
   * open batch, opening one if none is; resolves with the index of the entry that holds them.
   */
  submit(allocs: readonly AllocClientUpdate[], evals: readonly Evaluation[]): Promise<number> {
    return new Promise((resolve, reject) => {
      let p = this.pending;
      if (!p) {
        p = this.pending = { allocs: [], evals: [], waiters: [], timer: null };
        if (this.applying > 0) {
          p.timer = this.config.clock.setTimer(this.windowMs, () => void this.flush(p));
        } else {
          // Idle: nothing to wait for. Reports submitted in this same turn still join it.
          const opened = p;
          queueMicrotask(() => void this.flush(opened));
        }
      }
      p.allocs.push(...allocs);
      p.evals.push(...evals);
      p.waiters.push({ resolve, reject });
    });
  }

  /** Batches applied so far (tests, metrics). */
  applied(): number {
    return this.batches;
  }

  private async flush(p: Pending | undefined): Promise<void> {
    if (!p || this.pending !== p) return;
    this.pending = undefined;
    p.timer?.cancel();
    this.batches++;
    this.applying++;
    try {
      const index = await this.config.apply({ Type: 'AllocClientUpdate', Allocs: p.allocs, Evals: oneEvalPerJob(p.evals), Now: this.config.nowNanos() });
      for (const w of p.waiters) w.resolve(index);
    } catch (err) {
      for (const w of p.waiters) w.reject(err);
    } finally {
      this.applying--;
    }
  }
}

/**
 * Several clients reporting failures of one job's allocations in one window call for one
 * evaluation of that job, not one each (Nomad's batchUpdate groups them by job the same way).
 */
function oneEvalPerJob(evals: readonly Evaluation[]): Evaluation[] {
  const byJob = new Map<string, Evaluation>();
  for (const e of evals) {
    const key = `${e.Namespace}\u0000${e.JobID}`;
    if (!byJob.has(key)) byJob.set(key, e);
  }
  return [...byJob.values()];
}
