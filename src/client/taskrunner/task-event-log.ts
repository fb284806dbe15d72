/**
 * The agent log line of a task event, as Nomad's task runner writes them: every event is one
 * line at info ("Task event" with its type and display message), except the restart decisions,
 * which read as what the runner does next ("restarting task" with reason and delay, "not
 * restarting task" with reason), and a driver failure, which is an error. The runner's logger
 * already carries alloc_id and task, so each line names what it is about.
 *
 * The display message goes under `message`, never `msg`: a line carries one `msg` (its own).
 */
import type { Logger } from 'pino';
import type { TaskEvent } from '../../structs/alloc.js';
import { TaskEventType } from '../../structs/alloc.js';
import { formatDuration } from '../../structs/duration.js';

/** Writes the one log line of `ev` (already appended to the task's state). */
export function logTaskEvent(logger: Logger, ev: TaskEvent): void {
  switch (ev.Type) {
    case TaskEventType.Restarting:
      logger.info({ type: ev.Type, reason: ev.RestartReason, delay: formatDuration(ev.StartDelay) }, 'restarting task');
      return;
    case TaskEventType.NotRestarting:
      logger.info({ type: ev.Type, reason: ev.DisplayMessage, failed: ev.FailsTask }, 'not restarting task');
      return;
    case TaskEventType.Terminated:
      logger.info({ type: ev.Type, message: ev.DisplayMessage, exit_code: ev.ExitCode, signal: ev.Signal, failed: ev.FailsTask }, 'Task event');
      return;
    case TaskEventType.DriverFailure:
      logger.error({ type: ev.Type, message: ev.DisplayMessage, failed: ev.FailsTask }, 'Task event');
      return;
    default:
      logger.info({ type: ev.Type, message: ev.DisplayMessage, failed: ev.FailsTask }, 'Task event');
  }
}
