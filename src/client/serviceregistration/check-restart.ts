/**
 * A check's `check_restart`, as a small state machine: after `grace` from the check starting
 * (the task starting or restarting), `limit` consecutive failures ask for a restart; a success
 * resets the count. Pure: the caller passes `now` and acts on the answer.
 */
import { CheckStatus } from './check-probe.js';

export class CheckRestartTracker {
  private failures = 0;

  /**
   * @param limit consecutive failures that restart the task (0: never)
   * @param graceMs time after `startedAt` during which failures do not count
   */
  constructor(
    private readonly limit: number,
    private readonly graceMs: number,
    private startedAt: number,
  ) {}

  /** Takes one result; true when the task must restart now (the count then starts over). */
  observe(status: CheckStatus, now: number): boolean {
    if (this.limit <= 0 || status === CheckStatus.Pending) return false;
    if (status === CheckStatus.Success) {
      this.failures = 0;
      return false;
    }
    if (now < this.startedAt + this.graceMs) return false;
    this.failures++;
    if (this.failures < this.limit) return false;
    this.failures = 0;
    this.startedAt = now;
    return true;
  }
}
