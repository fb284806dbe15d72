/**
 * The restart tracker: a pure state machine that decides, after a task stops, whether it runs
 * again and after how long. It follows Nomad's restart policy semantics: `Attempts` restarts
 * are allowed within `Interval`; each waits `Delay` plus up to 25% jitter; once the attempts
 * are used up, mode "fail" gives up and mode "delay" waits until the interval resets.
 *
 * Time and randomness are inputs (`nowMs`, a RandomSource) so tests are exact.
 */
import type { RandomSource } from '../../../time/clock.js';
import type { ExitResult } from '../../../drivers/driver.js';
import { exitSuccessful } from '../../../drivers/driver.js';
import type { JobType, RestartPolicy, TaskLifecycle } from '../../../structs/job.js';
import { formatDuration, nanosToMs } from '../../../structs/duration.js';

/**
 * Whether a task that exits successfully is started again, as Nomad's restart tracker decides:
 * a service's main tasks and sidecars are; batch work is not, nor a prestart or poststart task
 * that is not a sidecar (it ran to completion, which is its job), nor a poststop task.
 */
export function restartsOnSuccess(jobType: JobType, lifecycle: TaskLifecycle | null): boolean {
  if (lifecycle?.Hook === 'prestart' || lifecycle?.Hook === 'poststart') return lifecycle.Sidecar;
  if (lifecycle?.Hook === 'poststop') return false;
  return jobType !== 'batch' && jobType !== 'sysbatch';
}

/** What the task runner should do next. */
export const RestartDecision = {
  /** Run the task again after `delayMs`. */
  Restart: 'restart',
  /** Give up: the task is dead and failed ("Not Restarting"). */
  NoRestart: 'noRestart',
  /** The task finished successfully and is not restarted: dead, not failed. */
  Terminated: 'terminated',
  /** The task was killed: dead, no restart, no event from the tracker. */
  Killed: 'killed',
} as const;
export type RestartDecision = (typeof RestartDecision)[keyof typeof RestartDecision];

/** The tracker's answer. `reason` is Nomad's restart reason string ('' when none). */
export interface RestartAnswer {
  decision: RestartDecision;
  delayMs: number;
  reason: string;
}

/** Nomad's restart reason strings, shown in task events. */
export const RestartReason = {
  WithinPolicy: 'Restart within policy',
  NoRestartsAllowed: 'Policy allows no restarts',
  Unrecoverable: 'Error was unrecoverable',
  Delay: 'Exceeded allowed attempts, applying a delay',
  SuccessfulExit: 'Restart unnecessary as task terminated successfully',
} as const;

/** The fraction of Delay added at most as random jitter. */
const JITTER_FRACTION = 0.25;

/** An error from starting a task, as far as the tracker cares. */
export interface StartFailure {
  recoverable: boolean;
}

/**
 * Tracks restarts of one task. Call one of the `set…` methods to say why the task stopped,
 * then `next(now)` once; `next` clears the recorded cause.
 */
export class RestartTracker {
  private count = 0;
  private intervalStart: number;
  private startErr: StartFailure | null = null;
  private exit: ExitResult | null = null;
  private failure = false;
  private killed = false;
  private restartTriggered = false;
  /** Whether a successful exit is restarted: see restartsOnSuccess. */
  private readonly restartOnSuccess: boolean;

  constructor(
    private readonly policy: RestartPolicy,
    jobType: JobType,
    private readonly random: RandomSource,
    nowMs: number,
    lifecycle: TaskLifecycle | null = null,
  ) {
    this.restartOnSuccess = restartsOnSuccess(jobType, lifecycle);
    this.intervalStart = nowMs;
  }

  /** Records that the task could not be started (or a prestart hook failed). */
  setStartError(err: StartFailure): this {
    this.startErr = err;
    this.failure = true;
    return this;
  }

  /** Records how the task exited. */
  setExitResult(res: ExitResult): this {
    this.exit = res;
    this.failure = true;
    return this;
  }

  /**
   * Records a user-requested restart. A plain one restarts at once without counting; with
   * `failure` it is treated like any failed exit (counted, delayed, may exhaust the policy),
   * so it must not also set the immediate-restart flag that bypasses the policy.
   */
  setRestartTriggered(failure: boolean): this {
    if (failure) this.failure = true;
    else this.restartTriggered = true;
    return this;
  }

  /** Records that the task was killed: it must not be restarted. */
  setKilled(): this {
    this.killed = true;
    return this;
  }

  /** Restarts counted in the current interval. */
  attempts(): number {
    return this.count;
  }

  /** Decides what happens next and clears the recorded cause. */
  next(nowMs: number): RestartAnswer {
    try {
      return this.decide(nowMs);
    } finally {
      this.startErr = null;
      this.exit = null;
      this.failure = false;
      this.killed = false;
      this.restartTriggered = false;
    }
  }

  private decide(now: number): RestartAnswer {
    if (this.killed) return { decision: RestartDecision.Killed, delayMs: 0, reason: '' };
    if (this.restartTriggered) return { decision: RestartDecision.Restart, delayMs: 0, reason: '' };

    const succeeded = this.exit !== null && this.startErr === null && exitSuccessful(this.exit);
    if (this.policy.Attempts === 0) {
      if (!this.restartOnSuccess && succeeded) {
        return { decision: RestartDecision.Terminated, delayMs: 0, reason: RestartReason.NoRestartsAllowed };
      }
      return { decision: RestartDecision.NoRestart, delayMs: 0, reason: RestartReason.NoRestartsAllowed };
    }

    const intervalMs = nanosToMs(this.policy.Interval);
    if (now > this.intervalStart + intervalMs) {
      this.count = 0;
      this.intervalStart = now;
    }
    this.count++;

    if (!this.failure) return { decision: RestartDecision.Restart, delayMs: 0, reason: '' };

    if (this.startErr !== null) {
      if (!this.startErr.recoverable) {
        return { decision: RestartDecision.NoRestart, delayMs: 0, reason: RestartReason.Unrecoverable };
      }
    } else if (succeeded && !this.restartOnSuccess) {
      return { decision: RestartDecision.Terminated, delayMs: 0, reason: RestartReason.SuccessfulExit };
    }

    if (this.count > this.policy.Attempts) {
      if (this.policy.Mode === 'fail') {
        const reason =
          `Exceeded allowed attempts ${this.policy.Attempts} in interval ` +
          `${formatDuration(this.policy.Interval)} and mode is "fail"`;
        return { decision: RestartDecision.NoRestart, delayMs: 0, reason };
      }
      // Mode delay: wait out the rest of the interval, then the count starts over.
      const delayMs = Math.max(0, this.intervalStart + intervalMs - now);
      return { decision: RestartDecision.Restart, delayMs, reason: RestartReason.Delay };
    }
    return { decision: RestartDecision.Restart, delayMs: this.jitteredDelay(), reason: RestartReason.WithinPolicy };
  }

  private jitteredDelay(): number {
    const base = nanosToMs(this.policy.Delay);
    return Math.round(base + this.random() * base * JITTER_FRACTION);
  }
}
