/**
 * The deployment watcher (a leader duty): follows every running deployment through the health
 * its allocations report and decides what happens next —
 *
 *   an allocation unhealthy ──────────► failed  (auto_revert → re-register the last stable version)
 *   progress deadline passed ─────────► failed  (same)
 *   canaries healthy + auto_promote ──► promoted (+ eval to roll out the rest)
 *   every group healthy and promoted ─► successful (the FSM marks the job version stable)
 *   more allocations healthy ─────────► an eval (TriggeredBy "deployment-watcher") to continue
 *
 * It reads the state store and writes only through the callbacks it is given; time comes from
 * a Clock, so tests drive it with a FakeClock and call pass() after each change.
 */
import type { Allocation, Deployment, DeploymentState, DeploymentStatusUpdate, Evaluation, Job } from '../../structs/index.js';
import type { Clock, Timer } from '../../time/clock.js';

/** The StatusDescription texts the watcher writes, with Nomad's wording. */
export const WatcherDescription = {
  Running: 'Deployment is running',
  NeedsPromotion: 'Deployment is running but requires manual promotion',
  AutoPromotion: 'Deployment is running pending automatic promotion',
  Successful: 'Deployment completed successfully',
  FailedAllocations: 'Failed due to unhealthy allocations',
  ProgressDeadline: 'Failed due to progress deadline',
} as const;
export type WatcherDescription = (typeof WatcherDescription)[keyof typeof WatcherDescription];

/** What the watcher reads. */
export interface WatcherState {
  deployments(): Deployment[];
  deploymentById(id: string): Deployment | undefined;
  jobById(namespace: string, id: string): Job | undefined;
  jobVersions(namespace: string, id: string): Job[];
  allocsByJob(namespace: string, jobId: string): Allocation[];
}

/** How the watcher acts. */
export interface DeploymentWatcherDeps {
  state: WatcherState;
  clock: Clock;
  /** Commits a status change with the evaluation that follows it. */
  updateStatus(update: DeploymentStatusUpdate, evaluation: Evaluation | null): Promise<void>;
  /** Commits a promotion of all canary groups with its evaluation. */
  promote(deploymentId: string, evaluation: Evaluation | null): Promise<void>;
  /** Commits an evaluation that continues a rollout. */
  createEval(evaluation: Evaluation): Promise<void>;
  /** Registers an earlier (stable) version of a job again: the auto-revert. */
  revert(job: Job): Promise<void>;
  /** A new evaluation of a job for a deployment. */
  newEval(job: Job, deploymentId: string): Evaluation;
  onError(err: unknown): void;
}

/** True when a group needs nothing more: all healthy and its canaries promoted. */
export function groupComplete(s: DeploymentState): boolean {
  return s.HealthyAllocs >= s.DesiredTotal && (s.DesiredCanaries === 0 || s.Promoted);
}

/** The last stable version of a job older than `version`, if any. */
export function lastStableVersion(versions: readonly Job[], version: number): Job | undefined {
  return [...versions].sort((a, b) => b.Version - a.Version).find((v) => v.Stable && v.Version < version);
}

/** Watches running deployments (see the file comment). start() on leadership, stop() on close. */
export class DeploymentWatcher {
  /** HealthyAllocs summed over groups when each deployment was last looked at. */
  private readonly seenHealthy = new Map<string, number>();
  private timer: Timer | null = null;
  /** When the armed timer fires (ms since the epoch). */
  private timerAt = Number.POSITIVE_INFINITY;
  private running = false;
  private again = false;
  private stopped = true;
  /** Deployments changed since the last pass; a full pass looks at every running one. */
  private readonly dirty = new Set<string>();
  private full = true;

  constructor(private readonly deps: DeploymentWatcherDeps) {}

  start(): void {
    this.stopped = false;
    this.full = true;
    this.poke();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }

  /**
   * Looks again soon at the given deployments (after a change to them or their allocations), or
   * at every running deployment when none are named. Only named deployments are re-read, so a
   * cluster with many running deployments does not pay for all of them on every write.
   */
  poke(deploymentIds?: Iterable<string>): void {
    if (deploymentIds === undefined) this.full = true;
    else for (const id of deploymentIds) if (id) this.dirty.add(id);
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    void this.run().catch((err: unknown) => this.deps.onError(err));
  }

  /** One look at every running deployment; resolves when its writes are committed. */
  async pass(): Promise<void> {
    this.full = true;
    await this.run();
  }

  /** Looks at what poke() named (or everything after a full request) until nothing is left. */
  private async run(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      let fullPass = false;
      const seen: Deployment[] = [];
      do {
        this.again = false;
        const full = this.full;
        const ids = [...this.dirty];
        this.full = false;
        this.dirty.clear();
        fullPass ||= full;
        const batch = full ? this.deps.state.deployments() : ids.map((id) => this.deps.state.deploymentById(id));
        for (const d of batch) {
          if (!d) continue;
          seen.push(d);
          if (d.Status === 'running') await this.watch(d);
          else this.seenHealthy.delete(d.ID);
        }
      } while ((this.again || this.full || this.dirty.size > 0) && !this.stopped);
      // A full pass re-arms the deadline timer from every deployment; a partial pass only pulls
      // it earlier for the deployments it looked at (a stale timer just causes one more pass).
      if (fullPass) this.armDeadlineTimer(this.deps.state.deployments(), true);
      else this.armDeadlineTimer(seen.map((d) => this.deps.state.deploymentById(d.ID) ?? d), false);
    } finally {
      this.running = false;
    }
  }

  private async watch(stale: Deployment): Promise<void> {
    const d = this.deps.state.deploymentById(stale.ID);
    if (!d || d.Status !== 'running') return;
    const job = this.deps.state.jobById(d.Namespace, d.JobID);
    if (!job) return;
    const allocs = this.deps.state.allocsByJob(d.Namespace, d.JobID).filter((a) => a.DeploymentID === d.ID);
    const groups = Object.entries(d.TaskGroups);

    if (allocs.some((a) => a.DeploymentStatus?.Healthy === false)) return this.fail(d, job, WatcherDescription.FailedAllocations);
    const now = this.deps.clock.now();
    for (const [, s] of groups) {
      if (groupComplete(s) || !s.RequireProgressBy) continue;
      if (now > Date.parse(s.RequireProgressBy)) return this.fail(d, job, WatcherDescription.ProgressDeadline);
    }

    // Canaries: auto-promote when every canary group wants it and its canaries are healthy.
    const pending = groups.filter(([, s]) => s.DesiredCanaries > 0 && !s.Promoted);
    if (pending.length > 0) {
      const healthy = (s: DeploymentState): number =>
        (s.PlacedCanaries ?? []).filter((id) => allocs.find((a) => a.ID === id)?.DeploymentStatus?.Healthy === true).length;
      const auto = pending.every(([, s]) => s.AutoPromote);
      if (auto && pending.every(([, s]) => healthy(s) >= s.DesiredCanaries)) {
        await this.deps.promote(d.ID, this.deps.newEval(job, d.ID));
        return;
      }
      const text = auto ? WatcherDescription.AutoPromotion : WatcherDescription.NeedsPromotion;
      if (d.StatusDescription !== text) await this.deps.updateStatus({ DeploymentID: d.ID, Status: 'running', StatusDescription: text }, null);
    }

    if (groups.length > 0 && groups.every(([, s]) => groupComplete(s))) {
      this.seenHealthy.delete(d.ID);
      await this.deps.updateStatus({ DeploymentID: d.ID, Status: 'successful', StatusDescription: WatcherDescription.Successful }, null);
      return;
    }

    const healthy = groups.reduce((n, [, s]) => n + s.HealthyAllocs, 0);
    const seen = this.seenHealthy.get(d.ID);
    this.seenHealthy.set(d.ID, healthy);
    if (healthy > (seen ?? 0)) await this.deps.createEval(this.deps.newEval(job, d.ID));
  }

  private async fail(d: Deployment, job: Job, why: WatcherDescription): Promise<void> {
    this.seenHealthy.delete(d.ID);
    let description: string = why;
    let revertTo: Job | undefined;
    if (Object.values(d.TaskGroups).some((s) => s.AutoRevert)) {
      revertTo = lastStableVersion(this.deps.state.jobVersions(d.Namespace, d.JobID), d.JobVersion);
      description += revertTo
        ? ` - rolling back to job version ${revertTo.Version}`
        : ' - no stable job version to auto revert to';
    }
    await this.deps.updateStatus({ DeploymentID: d.ID, Status: 'failed', StatusDescription: description }, this.deps.newEval(job, d.ID));
    if (revertTo && job.Version === d.JobVersion) await this.deps.revert(revertTo);
  }

  /**
   * Wakes up at the nearest progress deadline of the given running deployments: replacing the
   * armed timer (`replace`, from every deployment) or only when earlier than it.
   */
  private armDeadlineTimer(deployments: Iterable<Deployment>, replace: boolean): void {
    if (this.stopped) return;
    let next = Number.POSITIVE_INFINITY;
    for (const d of deployments) {
      if (d.Status !== 'running') continue;
      for (const s of Object.values(d.TaskGroups)) {
        if (groupComplete(s) || !s.RequireProgressBy) continue;
        next = Math.min(next, Date.parse(s.RequireProgressBy));
      }
    }
    if (!replace && this.timer !== null && next >= this.timerAt) return;
    this.timer?.cancel();
    this.timer = null;
    if (!Number.isFinite(next)) return;
    // Just past the deadline: the check is "now > RequireProgressBy".
    this.timerAt = next;
    this.timer = this.deps.clock.setTimer(next - this.deps.clock.now() + 1, () => {
      this.timer = null;
      this.poke();
    });
  }
}
