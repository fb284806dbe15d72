/**
 * The stats hook: while the task runs, polls the driver for resource usage every interval and
 * keeps the latest sample for the stats API.
 */
import type { Clock, Timer } from '../../../time/clock.js';
import type { TaskHandle, TaskResourceUsage } from '../../../drivers/driver.js';
import type { ExitedHook, PoststartHook, ShutdownHook, StopHook, TaskHookRequest } from '../interfaces.js';

/** Collects TaskResourceUsage samples between poststart and exit. */
export class StatsHook implements PoststartHook, ExitedHook, StopHook, ShutdownHook {
  readonly name = 'stats';
  private timer: Timer | null = null;
  private latest: TaskResourceUsage | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly intervalMs = 1000,
  ) {}

  /** The newest sample, or null when none was taken yet. */
  latestUsage(): TaskResourceUsage | null {
    return this.latest;
  }

  async poststart(req: TaskHookRequest, handle: TaskHandle): Promise<void> {
    this.cancel();
    // The timer's closure holds the driver and the task's ID, not the request: the request
    // carries the allocation of the moment, which the runner replaces on every update.
    const { driver } = req;
    const { taskId } = handle;
    const tick = (): void => {
      driver.taskStats(taskId).then(
        (u) => { this.latest = u; },
        () => { /* the task may be exiting; the next tick or exit settles it */ },
      );
      this.timer = this.clock.setTimer(this.intervalMs, tick);
    };
    this.timer = this.clock.setTimer(0, tick);
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
