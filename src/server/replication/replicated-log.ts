/**
 * The replicated log as a server sees it: proposals go in through append(), and every committed
 * entry comes back out of the backend's subscription, in order, whoever appended it, and is
 * applied by the FSM here and nowhere else. A local proposal resolves when its index has been
 * applied (etcd-raft's Ready/Advance: the proposer learns its entry's fate from the apply loop,
 * not from the append). The leader and every follower run exactly this loop, so their states
 * are the same function of the same log.
 *
 * Which comes first — the append resolving with an index or the entry arriving through the
 * subscription — is the backend's business (SQLite delivers before the append's callbacks run,
 * etcd's watch may be later); both orders are handled: an entry applied before its proposer knows
 * its index keeps its outcome until the proposer claims it.
 *
 * A failed apply (the FSM threw; it applies all or nothing) is skipped the same way on every
 * server and on replay, and rejects its proposer with APPLY_FAILED.
 */
import type pino from 'pino';
import type { Clock, Timer } from '../../time/clock.js';
import { LogError, type LogBackend, type LogEntry } from '../log/log-backend.js';
import type { EventBroker } from '../events/event-broker.js';
import type { StreamEvent } from '../events/event.js';
import type { Command } from '../fsm/commands.js';
import { decodeCommand, encodeCommand } from '../fsm/command-codec.js';
import { checkCommand } from '../fsm/command-check.js';
import type { Fsm } from '../fsm/fsm.js';
import { loadLatestSnapshot } from '../snapshot/snapshot-decoder.js';
import type { StateStore } from '../state/state-store.js';
import { ServerError } from '../server-error.js';

export interface ReplicatedLogDeps {
  log: LogBackend;
  store: StateStore;
  fsm: Fsm;
  events: EventBroker;
  clock: Clock;
  logger?: pino.Logger;
  /** Called after each entry that applied, in log order (the leader's reactions hang here). */
  onApplied(cmd: Command, index: number, events: StreamEvent[]): void;
  /** Called after every batch of delivered entries (snapshot threshold checks). */
  onAdvance?(appliedIndex: number): void;
  /** Called when the state was replaced by a snapshot (startup or after falling behind a compaction). */
  onSnapshotLoaded?(index: number): void;
}

interface Waiting {
  resolve: (index: number) => void;
  reject: (err: Error) => void;
}

/** An applied entry's outcome kept for a proposer that does not know its index yet. */
type Outcome = Error | null;

/** Delay before subscribing again after the backend failed to deliver (LOG_IO). */
const RESUBSCRIBE_DELAY_MS = 500;

/** See the file comment. Create with ReplicatedLog.open(). */
export class ReplicatedLog {
  private applied: number;
  private unsubscribe: (() => void) | null = null;
  private closed = false;
  private retryTimer: Timer | null = null;
  /** A snapshot reload in progress (after LOG_COMPACTED); at most one. */
  private reloading: Promise<void> | null = null;
  private proposalSeq = 0;
  /** In-flight appends: proposal → the applied index when proposed (its entry lands after it). */
  private readonly inflight = new Map<number, number>();
  /** Outcomes of entries applied while some append was in flight, by index. */
  private readonly outcomes = new Map<number, Outcome>();
  /** Proposals whose index is known but not applied yet. */
  private readonly waiting = new Map<number, Waiting>();
  /** Callers of waitApplied, resolved once the applied index reaches theirs. */
  private appliedWaiters: { index: number; resolve: () => void }[] = [];
  /**
   * This server's own plan results not yet applied, in append order. The backend delivers the
   * very text it appended, so such an entry applies from the command it was encoded from instead
   * of parsing it back: a plan of a thousand placements is the largest entry there is, and
   * parsing it only to copy every allocation into the state again doubles the garbage of the
   * busiest path. Plans are built by the plan applier and never changed after they are proposed;
   * other servers (and replays) decode the same text to the same state.
   */
  private readonly ownPlans: { payload: string; cmd: Command }[] = [];

  private constructor(private readonly deps: ReplicatedLogDeps) {
    this.applied = deps.store.latestIndex();
  }

  /**
   * Restores the state from the latest snapshot, subscribes from the entry after it and resolves
   * once every entry committed when it was called has been applied.
   */
  static async open(deps: ReplicatedLogDeps): Promise<ReplicatedLog> {
    const r = new ReplicatedLog(deps);
    await r.loadSnapshot();
    r.subscribe();
    await r.catchUp();
    return r;
  }

  /** The index of the last entry applied (failed ones included: they are skipped, not pending). */
  appliedIndex(): number {
    return this.applied;
  }

  /**
   * Appends a command and resolves with its index once it is applied; rejects with COMMAND_INVALID
   * (nothing appended), the backend's LOG_FENCED (this server is no longer the leader), LOG_WRITE_FAILED
   * or APPLY_FAILED.
   */
  propose(cmd: Command): Promise<number> {
    if (this.closed) return Promise.reject(new ServerError('SERVER_CLOSED', {}));
    let payload: string;
    try {
      checkCommand(cmd);
      payload = encodeCommand(cmd);
    } catch (err) {
      return Promise.reject(new ServerError('COMMAND_INVALID', { field: `${String(cmd?.Type)} command`, reason: (err as Error).message }, { cause: err }));
    }
    const id = ++this.proposalSeq;
    this.inflight.set(id, this.applied);
    const own = cmd.Type === 'ApplyPlanResults' ? { payload, cmd } : null;
    if (own) this.ownPlans.push(own);
    return new Promise<number>((resolve, reject) => {
      this.deps.log.append([{ type: cmd.Type, payload }]).then(
        ([index]) => {
          this.inflight.delete(id);
          if (index! <= this.applied) {
            // Applied before we learnt the index. No outcome: a snapshot covering it replaced
            // the state (the follower fell behind a compaction), so it did apply.
            const outcome = this.outcomes.get(index!);
            this.outcomes.delete(index!);
            if (outcome) reject(outcome);
            else resolve(index!);
          } else if (this.closed) {
            reject(new ServerError('SERVER_CLOSED', {}));
          } else {
            this.waiting.set(index!, { resolve, reject });
          }
          this.pruneOutcomes();
        },
        (err: unknown) => {
          this.inflight.delete(id);
          if (own) this.forgetOwnPlan(own);
          this.pruneOutcomes();
          if (err instanceof LogError && err.code === 'LOG_FENCED') reject(err);
          else reject(new ServerError('LOG_WRITE_FAILED', { reason: (err as Error).message }, { cause: err }));
        },
      );
    });
  }

  /** Resolves once every entry committed now has been applied here (a barrier, as Nomad's on leadership). */
  async catchUp(): Promise<void> {
    const last = await this.deps.log.lastIndex();
    await this.waitApplied(last);
  }

  /** Resolves once the applied index is at least `index` (or the log is closed). */
  waitApplied(index: number): Promise<void> {
    if (this.applied >= index || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.appliedWaiters.push({ index, resolve }));
  }

  /** Stops applying; proposals still waiting for their entry fail with SERVER_CLOSED. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.retryTimer?.cancel();
    for (const w of this.waiting.values()) w.reject(new ServerError('SERVER_CLOSED', {}));
    this.waiting.clear();
    for (const w of this.appliedWaiters.splice(0)) w.resolve();
  }

  private subscribe(): void {
    if (this.closed) return;
    this.unsubscribe = this.deps.log.subscribe(this.applied + 1, {
      onEntries: (entries) => this.applyEntries(entries),
      onError: (err) => this.subscriptionFailed(err),
    });
  }

  private subscriptionFailed(err: LogError): void {
    this.unsubscribe = null;
    if (this.closed || err.code === 'LOG_CLOSED') return;
    if (err.code === 'LOG_COMPACTED') {
      // Behind a compaction: the entries we miss are only in the latest snapshot now.
      this.deps.logger?.warn({ err, applied: this.applied }, 'server: behind the log compaction; reloading the latest snapshot');
      this.reloading ??= this.loadSnapshot()
        .then(() => this.subscribe())
        .catch((e: unknown) => this.retryLater(e))
        .finally(() => (this.reloading = null));
      return;
    }
    this.retryLater(err);
  }

  private retryLater(err: unknown): void {
    if (this.closed) return;
    this.deps.logger?.error({ err, applied: this.applied }, 'server: log subscription failed; subscribing again');
    this.retryTimer = this.deps.clock.setTimer(RESUBSCRIBE_DELAY_MS, () => {
      this.retryTimer = null;
      this.subscribe();
    });
  }

  /** Replaces the state with the latest snapshot when it is ahead of what is applied. */
  private async loadSnapshot(): Promise<void> {
    const snap = await loadLatestSnapshot(this.deps.log);
    if (!snap || snap.index <= this.applied || this.closed) return;
    this.deps.store.restore(snap.state);
    this.applied = snap.index;
    for (const [index, w] of this.waiting) {
      if (index > snap.index) continue;
      this.waiting.delete(index);
      w.resolve(index);
    }
    this.deps.onSnapshotLoaded?.(snap.index);
    this.wakeAppliedWaiters();
  }

  private applyEntries(entries: LogEntry[]): void {
    if (this.closed) return;
    for (const entry of entries) {
      if (entry.index <= this.applied) continue;
      if (entry.index !== this.applied + 1) {
        // The contract rules gaps out; should one appear, read again from where we are.
        this.unsubscribe?.();
        this.unsubscribe = null;
        this.retryLater(new LogError('LOG_IO', `log delivered entry ${entry.index} after ${this.applied}`));
        break;
      }
      this.applyOne(entry);
    }
    this.pruneOutcomes();
    this.wakeAppliedWaiters();
    this.deps.onAdvance?.(this.applied);
  }

  /**
   * The command of an own plan whose text `payload` is, if it is one. Own plans ahead of it
   * never reached this server's apply (a snapshot replaced them): they are dropped.
   */
  private takeOwnPlan(payload: string): Command | undefined {
    const i = this.ownPlans.findIndex((p) => p.payload === payload);
    if (i < 0) return undefined;
    const { cmd } = this.ownPlans[i]!;
    this.ownPlans.splice(0, i + 1);
    return cmd;
  }

  private forgetOwnPlan(own: { payload: string; cmd: Command }): void {
    const i = this.ownPlans.indexOf(own);
    if (i >= 0) this.ownPlans.splice(i, 1);
  }

  private applyOne(entry: LogEntry): void {
    const index = entry.index;
    // The entry is committed whatever happens: it counts as applied (a failed apply changed
    // nothing, and every server and every replay skips it the same way).
    this.applied = index;
    let outcome: Outcome = null;
    try {
      const cmd = this.takeOwnPlan(entry.payload) ?? decodeCommand(entry.payload);
      const events = this.deps.fsm.apply(cmd, index);
      this.deps.events.publish(index, events);
      try {
        this.deps.onApplied(cmd, index, events);
      } catch (err) {
        this.deps.logger?.error({ err, index }, 'server: reaction to an applied entry failed');
      }
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      this.deps.logger?.error({ err: e, index }, 'server: skipping log entry that failed to apply');
      outcome = new ServerError('APPLY_FAILED', { index, reason: e.message }, { cause: e });
    }
    const w = this.waiting.get(index);
    if (w) {
      this.waiting.delete(index);
      if (outcome) w.reject(outcome);
      else w.resolve(index);
    } else if (this.inflight.size > 0) {
      this.outcomes.set(index, outcome);
    }
  }

  /**
   * Drops kept outcomes no in-flight append can claim: every in-flight entry lands after the
   * applied index of its proposal, so only outcomes above the oldest such index may be claimed.
   */
  private pruneOutcomes(): void {
    if (this.outcomes.size === 0) return;
    if (this.inflight.size === 0) return this.outcomes.clear();
    const floor = this.inflight.values().next().value!;
    for (const index of this.outcomes.keys()) {
      if (index > floor) break;
      this.outcomes.delete(index);
    }
  }

  private wakeAppliedWaiters(): void {
    if (this.appliedWaiters.length === 0) return;
    const still: typeof this.appliedWaiters = [];
    for (const w of this.appliedWaiters) {
      if (this.applied >= w.index) w.resolve();
      else still.push(w);
    }
    this.appliedWaiters = still;
  }
}
