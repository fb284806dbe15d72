/**
 * Recognises, in a task state loaded after an agent restart, a task whose exit was recorded
 * but whose restart decision was not: the agent died after persisting the Terminated event
 * (the task runner writes it before dropping the driver handle) and before persisting the
 * state the restart tracker decided. Such a task has exited; starting it again would run a
 * finished batch task twice, so the task runner replays the recorded exit through its
 * restart tracker instead.
 */
import type { TaskEvent, TaskState } from '../../structs/alloc.js';
import { TaskEventType } from '../../structs/alloc.js';
import type { ExitResult } from '../../drivers/driver.js';

/** Why the task stopped, as far as the events before the Terminated event tell. */
export const ExitCause = {
  /** The task exited on its own. */
  Exited: 'exited',
  /** The task runner killed it (Killed precedes Terminated): it must not run again. */
  Killed: 'killed',
  /** A user restart stopped it (Restart Signaled precedes Terminated): it restarts at once. */
  RestartSignaled: 'restartSignaled',
} as const;
export type ExitCause = (typeof ExitCause)[keyof typeof ExitCause];

/** An exit recorded in the state DB whose outcome the task runner still has to decide. */
export interface RestoredExit {
  result: ExitResult;
  cause: ExitCause;
}

/**
 * The recorded exit of a restored task, or null when there is none to replay: only a task
 * still marked running whose newest event is Terminated qualifies (a decided outcome always
 * appends a later event or marks the task dead).
 */
export function restoredExit(state: TaskState | null | undefined): RestoredExit | null {
  if (!state || state.State !== 'running') return null;
  const last = state.Events.at(-1);
  if (!last || last.Type !== TaskEventType.Terminated) return null;
  return { result: exitResultOf(last), cause: causeBefore(state.Events.at(-2)) };
}

/** The ExitResult a Terminated event was made from (the runner's emitExitEvent). */
function exitResultOf(ev: TaskEvent): ExitResult {
  const oomKilled = ev.Details?.oom_killed === 'true';
  const result: ExitResult = { exitCode: ev.ExitCode, signal: ev.Signal, oomKilled };
  if (!oomKilled && ev.Message) result.err = ev.Message;
  return result;
}

function causeBefore(prev: TaskEvent | undefined): ExitCause {
  if (prev?.Type === TaskEventType.Killed) return ExitCause.Killed;
  if (prev?.Type === TaskEventType.RestartSignal) return ExitCause.RestartSignaled;
  return ExitCause.Exited;
}
