/**
 * Killing a task with retries: a driver that fails to stop a task is asked again after an
 * exponentially growing pause (5 s, 20 s, 80 s, then capped at 2 min), at most 5 times.
 */
import type { Clock } from '../../time/clock.js';
import { DriverError, DriverErrorCode } from '../../drivers/driver.js';

export const KILL_BACKOFF_BASELINE_MS = 5_000;
export const KILL_BACKOFF_LIMIT_MS = 120_000;
export const KILL_FAILURE_LIMIT = 5;

/** The pause after the attempt numbered `attempt` (0-based) failed. */
export function killBackoffMs(attempt: number): number {
  return Math.min(KILL_BACKOFF_BASELINE_MS * 4 ** attempt, KILL_BACKOFF_LIMIT_MS);
}

/**
 * Calls `stop` until it succeeds, a TaskNotFound says the task is already gone, or the
 * attempts run out; returns the last error then, or null on success.
 */
export async function killWithBackoff(stop: () => Promise<void>, clock: Clock, signal?: AbortSignal): Promise<Error | null> {
  let last: Error | null = null;
  for (let i = 0; i < KILL_FAILURE_LIMIT; i++) {
    try {
      await stop();
      return null;
    } catch (err) {
      if (err instanceof DriverError && err.code === DriverErrorCode.TaskNotFound) return null;
      last = err instanceof Error ? err : new Error(String(err));
      if (i === KILL_FAILURE_LIMIT - 1) break;
      try {
        await clock.sleep(killBackoffMs(i), signal);
      } catch {
        return last;
      }
    }
  }
  return last;
}
