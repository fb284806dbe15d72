/**
 * The deployment health of one allocation, from its task states (update.health_check
 * "task_states") and, with "checks", its native service checks too: healthy once every main
 * task has been running — and every check passing — for min_healthy_time without a restart,
 * unhealthy when a task fails or healthy_deadline passes first. Decides once; time comes from
 * a Clock.
 */
import type { TaskState } from '../../structs/alloc.js';
import type { Task, UpdateStrategy } from '../../structs/job.js';
import { nanosToMs } from '../../structs/duration.js';
import type { Clock, Timer } from '../../time/clock.js';

/** What a HealthTracker needs. */
export interface HealthTrackerConfig {
  clock: Clock;
  minHealthyMs: number;
  healthyDeadlineMs: number;
  /** Tasks that must be running: not prestart/poststart/poststop, except sidecars. */
  mainTasks: readonly string[];
  /** Called once with the verdict. */
  onHealth: (healthy: boolean) => void;
  /** health_check = "checks": the allocation's service checks must pass too (see checksChanged). */
  checksRequired?: boolean;
}

/** The tasks whose running state decides health. */
export function mainTaskNames(tasks: readonly Task[]): string[] {
  return tasks.filter((t) => !t.Lifecycle || t.Lifecycle.Sidecar).map((t) => t.Name);
}

/** A tracker config from a group's update strategy; null when health is set by hand ("manual"). */
export function healthSettings(u: UpdateStrategy | null): { minHealthyMs: number; healthyDeadlineMs: number } | null {
  if (!u || u.HealthCheck === 'manual') return null;
  return { minHealthyMs: nanosToMs(u.MinHealthyTime), healthyDeadlineMs: nanosToMs(u.HealthyDeadline) };
}

/** Tracks one allocation's health (see the file comment). */
export class HealthTracker {
  private decided = false;
  private deadline: Timer | null = null;
  private healthyTimer: Timer | null = null;
  /** The restarts and start times the running streak began with. */
  private streakKey = '';
  /** Whether every service check passes (fed by checksChanged; true until told otherwise). */
  private checksPassing = true;
  private lastStates: Readonly<Record<string, TaskState>> = {};

  constructor(private readonly cfg: HealthTrackerConfig) {}

  /** Starts the healthy_deadline. */
  start(): void {
    if (this.decided || this.deadline || this.cfg.healthyDeadlineMs <= 0) return;
    this.deadline = this.cfg.clock.setTimer(this.cfg.healthyDeadlineMs, () => this.decide(false));
  }

  /** Stops the timers without a verdict (the allocation is stopping). */
  stop(): void {
    this.decided = true;
    this.clearTimers();
  }

  /** True once a verdict was given (or the tracker stopped). */
  isDone(): boolean {
    return this.decided;
  }

  /** Feeds whether every service check passes now (health_check "checks"). */
  checksChanged(passing: boolean): void {
    if (this.checksPassing === passing) return;
    this.checksPassing = passing;
    this.update(this.lastStates);
  }

  /** Feeds the latest task states. */
  update(states: Readonly<Record<string, TaskState>>): void {
    this.lastStates = states;
    if (this.decided) return;
    const main = this.cfg.mainTasks.map((n) => states[n]);
    if (Object.values(states).some((s) => s.Failed)) return this.decide(false);
    const checksOk = !this.cfg.checksRequired || this.checksPassing;
    const allRunning = checksOk && main.length > 0 && main.every((s) => s?.State === 'running');
    if (!allRunning) {
      this.healthyTimer?.cancel();
      this.healthyTimer = null;
      this.streakKey = '';
      return;
    }
    // A restart starts the streak again.
    const key = main.map((s) => `${s!.Restarts}/${s!.StartedAt ?? ''}/${s!.LastRestart ?? ''}`).join(',');
    if (key === this.streakKey && this.healthyTimer) return;
    this.streakKey = key;
    this.healthyTimer?.cancel();
    this.healthyTimer = this.cfg.clock.setTimer(this.cfg.minHealthyMs, () => this.decide(true));
  }

  private decide(healthy: boolean): void {
    if (this.decided) return;
    this.decided = true;
    this.clearTimers();
    this.cfg.onHealth(healthy);
  }

  private clearTimers(): void {
    this.deadline?.cancel();
    this.healthyTimer?.cancel();
    this.deadline = null;
    this.healthyTimer = null;
  }
}
