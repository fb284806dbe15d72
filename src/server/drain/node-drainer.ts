/**
 * The node drainer, a leader duty: while any node drains, it runs a pass of `planDrain` every
 * `intervalMs` (and soon after `poke()`), marks the chosen allocations for migration together
 * with one evaluation per job (the scheduler then stops and replaces them), and completes the
 * drains with nothing left. Passes never overlap; a failed pass is logged and retried on the
 * next tick. Time comes from the injected Clock. An idle pass costs O(draining nodes): it reads
 * the state store's set of draining nodes, never the whole node table.
 */
import type { Allocation, DesiredTransition, Evaluation, Job, Node } from '../../structs/index.js';
import type { Clock, Timer } from '../../time/clock.js';
import { drainForceAt, planDrain, type DrainState } from './drain-plan.js';

/** What the drainer needs from the server. */
export interface NodeDrainerDeps {
  /** The state (the store): a pass with no node draining reads nothing of it but that. */
  state: DrainState;
  clock: Clock;
  /** Applies the migrate marks and the evaluations in one log command. */
  markForMigration(transitions: Record<string, DesiredTransition>, evals: Evaluation[]): Promise<void>;
  /** Applies "drain complete" for a node (DrainStrategy cleared, node event). */
  completeDrain(nodeId: string): Promise<void>;
  /** A new pending evaluation for a job, triggered by a node drain. */
  newEval(job: Job, alloc: Allocation): Evaluation;
  onError?(err: unknown): void;
  /** Time between passes while a node drains (ms, default 1000). */
  intervalMs?: number;
}

/** Drives node drains (see the file comment). start() on leadership, stop() on close. */
export class NodeDrainer {
  private timer: Timer | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private readonly intervalMs: number;

  constructor(private readonly deps: NodeDrainerDeps) {
    this.intervalMs = deps.intervalMs ?? 1000;
  }

  /** Starts the periodic passes. Idempotent. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the passes; a pass in flight finishes. Idempotent. */
  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }

  /** Asks for a pass soon (after a drain was set or allocations changed). */
  poke(): void {
    if (this.stopped || this.running) return;
    this.schedule(0);
  }

  /** Runs one pass now (tests, and the timer). Resolves when its writes are applied. */
  async tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer?.cancel();
    this.timer = this.deps.clock.setTimer(ms, () => {
      this.timer = null;
      void this.tick()
        .catch((err: unknown) => this.deps.onError?.(err))
        .finally(() => this.schedule(this.nextDelay()));
    });
  }

  /** The interval, or sooner when a drain deadline falls before it. */
  private nextDelay(): number {
    const now = this.deps.clock.now();
    let delay = this.intervalMs;
    for (const n of this.deps.state.drainingNodes()) {
      const at = drainForceAt(n);
      if (at !== null && at > now) delay = Math.min(delay, at - now);
    }
    return delay;
  }

  private async pass(): Promise<void> {
    const plan = planDrain(this.deps.state, this.deps.clock.now());
    if (plan.migrate.length > 0) {
      const transitions: Record<string, DesiredTransition> = {};
      const evals = new Map<string, Evaluation>();
      for (const { alloc, job } of plan.migrate) {
        transitions[alloc.ID] = { Migrate: true };
        const key = `${alloc.Namespace}\u0000${alloc.JobID}`;
        if (job && !evals.has(key)) evals.set(key, this.deps.newEval(job, alloc));
      }
      await this.deps.markForMigration(transitions, [...evals.values()]);
    }
    for (const node of plan.complete) await this.complete(node);
  }

  private async complete(node: Node): Promise<void> {
    // Re-check: the drain may have been cancelled or replaced while this pass ran.
    const now = this.deps.state.nodeById(node.ID);
    if (!now?.DrainStrategy || now.DrainStrategy.StartedAt !== node.DrainStrategy?.StartedAt) return;
    await this.deps.completeDrain(node.ID);
  }
}
