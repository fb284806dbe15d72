/**
 * The leader's periodic dispatcher: keeps one timer per enabled periodic job, armed for the next
 * launch of its cron spec(s) in its time zone, and at that time registers the child job
 * `<parent>/periodic-<unix>`. With prohibit_overlap a launch is skipped while an earlier child
 * is not dead. On leadership (server start) every periodic job is re-armed, and a launch missed
 * while no leader ran (the spec fired after the newest child's launch) is made at once.
 */
import type { Job } from '../../structs/index.js';
import type { Clock, Timer } from '../../time/clock.js';
import type { StateReader } from '../state/state-reader.js';
import { nextLaunchOf } from './cron-spec.js';
import { childLaunchTime, isActivePeriodic, periodicChildJob, periodicSpecs } from './periodic-launch.js';

/** What the dispatcher needs from its server. */
export interface PeriodicDispatcherDeps {
  clock: Clock;
  state: StateReader;
  /** Registers a child job (the server's registerJob). */
  launch: (child: Job) => Promise<unknown>;
  /** Reports a failed launch or an unusable spec; the dispatcher keeps going. */
  onError?: (err: unknown, what: string) => void;
  /** Reports a launch skipped because of prohibit_overlap. */
  onSkip?: (job: Job, at: number) => void;
}

interface Armed {
  timer: Timer;
  at: number;
}

function key(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

/** Launches periodic jobs' children on schedule (see the file comment). */
export class PeriodicDispatcher {
  private readonly armed = new Map<string, Armed>();
  private running = false;

  constructor(private readonly deps: PeriodicDispatcherDeps) {}

  /** Arms every periodic job in the state, catching up on launches missed while stopped. */
  start(): void {
    this.running = true;
    for (const job of this.deps.state.jobs('*')) {
      if (isActivePeriodic(job)) this.arm(job, true);
    }
  }

  /** Cancels every timer; nothing launches until start() again. */
  stop(): void {
    this.running = false;
    for (const a of this.armed.values()) a.timer.cancel();
    this.armed.clear();
  }

  /** Re-reads one job after it was registered or deregistered and (re)arms or forgets it. */
  jobChanged(namespace: string, id: string): void {
    if (!this.running) return;
    const job = this.deps.state.jobById(namespace, id);
    if (job && isActivePeriodic(job)) this.arm(job, false);
    else this.disarm(namespace, id);
  }

  /** The next launch time (ms) of a tracked job, or null. */
  nextLaunch(namespace: string, id: string): number | null {
    return this.armed.get(key(namespace, id))?.at ?? null;
  }

  /** How many periodic jobs are armed. */
  trackedCount(): number {
    return this.armed.size;
  }

  private disarm(namespace: string, id: string): void {
    const k = key(namespace, id);
    this.armed.get(k)?.timer.cancel();
    this.armed.delete(k);
  }

  private arm(job: Job, catchUp: boolean, notBefore = 0): void {
    this.disarm(job.Namespace, job.ID);
    const now = this.deps.clock.now();
    const specs = periodicSpecs(job);
    const tz = job.Periodic?.TimeZone || 'UTC';
    let at: number | null;
    try {
      at = nextLaunchOf(specs, Math.max(now, notBefore), tz);
      if (catchUp) {
        const last = this.lastLaunch(job);
        const missed = last === null ? null : nextLaunchOf(specs, last, tz);
        if (missed !== null && missed <= now) at = now;
      }
    } catch (err) {
      // A bad spec (CronSpecError) or zone must not break the apply path that called us.
      this.deps.onError?.(err, `periodic job "${job.ID}"`);
      return;
    }
    if (at === null) return;
    this.schedule(job.Namespace, job.ID, at);
  }

  /** Sets the timer for the launch at `at`. */
  private schedule(namespace: string, id: string, at: number): void {
    const timer = this.deps.clock.setTimer(at - this.deps.clock.now(), () => void this.fire(namespace, id, at));
    this.armed.set(key(namespace, id), { timer, at });
  }

  private async fire(namespace: string, id: string, at: number): Promise<void> {
    // A launch is checked against its schedule before it happens: a timer that fired early
    // (a platform timer limit, a clock step) waits for the rest instead of launching a child
    // dated in the future, whose re-arm would launch the next one at once, and so on.
    if (this.deps.clock.now() < at) {
      this.deps.onError?.(new Error(`timer fired ${at - this.deps.clock.now()} ms early`), `periodic job "${id}"`);
      if (this.running) this.schedule(namespace, id, at);
      return;
    }
    this.armed.delete(key(namespace, id));
    const job = this.deps.state.jobById(namespace, id);
    if (!this.running || !job || !isActivePeriodic(job)) return;
    try {
      if (job.Periodic?.ProhibitOverlap && this.hasLiveChild(job)) this.deps.onSkip?.(job, at);
      else await this.deps.launch(periodicChildJob(job, at));
    } catch (err) {
      this.deps.onError?.(err, `launching periodic job "${id}"`);
    }
    // The job may have changed (or been re-armed by its own re-registration) meanwhile.
    if (!this.running || this.armed.has(key(namespace, id))) return;
    const current = this.deps.state.jobById(namespace, id);
    if (current && isActivePeriodic(current)) this.arm(current, false, at);
  }

  /** Whether a child of `job` is still pending or running (prohibit_overlap). */
  private hasLiveChild(job: Job): boolean {
    return this.deps.state.jobs(job.Namespace, `${job.ID}/`).some((c) => c.ParentID === job.ID && c.Status !== 'dead');
  }

  /** The launch time of the newest periodic child in the state, or null. */
  private lastLaunch(job: Job): number | null {
    let last: number | null = null;
    for (const c of this.deps.state.jobs(job.Namespace, `${job.ID}/`)) {
      const t = c.ParentID === job.ID ? childLaunchTime(job.ID, c.ID) : null;
      if (t !== null && (last === null || t > last)) last = t;
    }
    return last;
  }
}
