/**
 * The max_run_duration hook (Nomad 1.10, batch and sysbatch jobs): once the task has run for
 * its MaxRunDuration, counted from when it started, the task is killed with a Killing event
 * whose message is Nomad's "allocation exceeded max_run_duration". A killed task is not a
 * failed one, so the allocation completes rather than fails and is not rescheduled. The timer
 * is disarmed when the task exits, stops or the agent shuts down; a restarted task starts a
 * new count, and a reattached one keeps counting from its original start.
 */
import type { Clock, Timer } from '../../../time/clock.js';
import type { TaskHandle } from '../../../drivers/driver.js';
import { TaskEventType } from '../../../structs/alloc.js';
import { nanosToMs } from '../../../structs/duration.js';
import type { ExitedHook, PoststartHook, ShutdownHook, StopHook, TaskHookRequest } from '../interfaces.js';
import { newTaskEvent } from '../task-event.js';

/** Nomad's structs.AllocTimeoutReasonMaxRunDuration. */
export const MAX_RUN_DURATION_REASON = 'allocation exceeded max_run_duration';

/**
 * Whether max_run_duration ended this task: its events hold the hook's Killing event. The
 * alloc runner skips poststop tasks then, and the allocation's description names the cause.
 */
export function killedByMaxRunDuration(state: { Events?: readonly { KillReason?: string }[] | null }): boolean {
  return state.Events?.some((e) => e.KillReason === MAX_RUN_DURATION_REASON) ?? false;
}

/** Kills the task when it outlives its MaxRunDuration. */
export class MaxRunDurationHook implements PoststartHook, ExitedHook, StopHook, ShutdownHook {
  readonly name = 'max_run_duration';
  private timer: Timer | null = null;

  constructor(private readonly clock: Clock) {}

  async poststart(req: TaskHookRequest, handle: TaskHandle): Promise<void> {
    this.cancel();
    const limit = req.task.MaxRunDuration;
    if (!limit || limit <= 0) return;
    const deadline = handle.startedAt + nanosToMs(limit);
    const fire = (): void => {
      this.timer = null;
      const ev = newTaskEvent(TaskEventType.Killing, this.clock.now(), { KillReason: MAX_RUN_DURATION_REASON });
      void req.lifecycle.kill(ev);
    };
    this.timer = this.clock.setTimer(Math.max(0, deadline - this.clock.now()), fire);
  }

  async exited(): Promise<void> {
    this.cancel();
  }

  async stop(): Promise<void> {
    this.cancel();
  }

  async shutdown(): Promise<void> {
    this.cancel();
  }

  private cancel(): void {
    this.timer?.cancel();
    this.timer = null;
  }
}
