/**
 * Task events: construction with Nomad's types and display messages, and the capped event
 * history kept on a TaskState.
 */
import type { TaskEvent, TaskState } from '../../structs/alloc.js';
import { TaskEventType } from '../../structs/alloc.js';
import { formatDuration, msToNanos } from '../../structs/duration.js';

/** Nomad keeps at most this many events per task; the oldest are dropped. */
export const MAX_TASK_EVENTS = 10;

/** A new event of `type` at `nowMs` with the given fields; DisplayMessage is filled in. */
export function newTaskEvent(type: string, nowMs: number, fields: Partial<TaskEvent> = {}): TaskEvent {
  const ev: TaskEvent = {
    Type: type,
    Time: msToNanos(nowMs),
    DisplayMessage: '',
    Details: {},
    Message: '',
    FailsTask: false,
    RestartReason: '',
    SetupError: '',
    DriverError: '',
    DriverMessage: '',
    ExitCode: 0,
    Signal: 0,
    KillReason: '',
    KillTimeout: 0,
    KillError: '',
    StartDelay: 0,
    DownloadError: '',
    ValidationError: '',
    DiskLimit: 0,
    FailedSibling: '',
    VaultError: '',
    TaskSignalReason: '',
    TaskSignal: '',
    GenericSource: '',
    ...fields,
  };
  ev.Details = { ...ev.Details, ...detailsOf(ev) };
  ev.DisplayMessage = displayMessage(ev);
  return ev;
}

/** The human-readable message Nomad shows for an event. */
export function displayMessage(ev: TaskEvent): string {
  switch (ev.Type) {
    case TaskEventType.Received:
      return 'Task received by client';
    case TaskEventType.Setup:
      return ev.Message;
    case TaskEventType.Started:
      return 'Task started by client';
    case TaskEventType.Terminated: {
      const parts = [`Exit Code: ${ev.ExitCode}`];
      if (ev.Signal !== 0) parts.push(`Signal: ${ev.Signal}`);
      if (ev.Message !== '') parts.push(`Exit Message: ${JSON.stringify(ev.Message)}`);
      return parts.join(', ');
    }
    case TaskEventType.Restarting: {
      const inText = `Task restarting in ${formatDuration(ev.StartDelay)}`;
      return ev.RestartReason !== '' && ev.RestartReason !== 'Restart within policy'
        ? `${ev.RestartReason} - ${inText}`
        : inText;
    }
    case TaskEventType.NotRestarting:
      return ev.RestartReason !== '' ? ev.RestartReason : 'Task exceeded restart policy';
    case TaskEventType.Killing:
      if (ev.KillReason !== '') return ev.KillReason;
      if (ev.KillTimeout !== 0) return `Sent interrupt. Waiting ${formatDuration(ev.KillTimeout)} before force killing`;
      return 'Sent interrupt';
    case TaskEventType.Killed:
      return ev.KillError !== '' ? ev.KillError : 'Task successfully killed';
    case TaskEventType.DriverFailure:
      return ev.DriverError !== '' ? ev.DriverError : 'Failed to start task';
    case TaskEventType.SetupFailure:
      return ev.SetupError !== '' ? ev.SetupError : 'Task setup failed';
    case TaskEventType.FailedValidation:
      return ev.ValidationError !== '' ? ev.ValidationError : 'Validation of task failed';
    case TaskEventType.SiblingFailed:
      return ev.FailedSibling !== '' ? `Task's sibling ${JSON.stringify(ev.FailedSibling)} failed` : "Task's sibling failed";
    case TaskEventType.LeaderDead:
      return 'Leader Task in Group dead';
    case TaskEventType.MainDead:
      return 'Main tasks in the group died';
    case TaskEventType.Signaling: {
      const sig = ev.TaskSignal;
      const reason = ev.TaskSignalReason;
      if (sig === '' && reason === '') return 'Task being sent a signal';
      if (sig === '') return reason;
      if (reason === '') return `Task being sent signal ${sig}`;
      return `Task being sent signal ${sig}: ${reason}`;
    }
    case TaskEventType.RestartSignal:
      return ev.RestartReason !== '' ? ev.RestartReason : 'Task signaled to restart';
    case TaskEventType.HookFailed:
      return ev.Message !== '' ? ev.Message : 'Task hook failed';
    case TaskEventType.ClientRestart:
      return 'Task restarted due to client restart';
    default:
      return ev.Message;
  }
}

/** Nomad also exposes the event's fields as string Details; we fill the common ones. */
function detailsOf(ev: TaskEvent): Record<string, string> {
  const d: Record<string, string> = {};
  if (ev.Type === TaskEventType.Terminated) {
    d.exit_code = String(ev.ExitCode);
    d.signal = String(ev.Signal);
    if (ev.Details.oom_killed) d.oom_killed = ev.Details.oom_killed;
  }
  if (ev.FailsTask) d.fails_task = 'true';
  if (ev.RestartReason) d.restart_reason = ev.RestartReason;
  if (ev.StartDelay) d.start_delay = String(ev.StartDelay);
  if (ev.KillTimeout) d.kill_timeout = formatDuration(ev.KillTimeout);
  if (ev.KillError) d.kill_error = ev.KillError;
  if (ev.DriverError) d.driver_error = ev.DriverError;
  if (ev.FailedSibling) d.failed_sibling = ev.FailedSibling;
  if (ev.TaskSignal) d.task_signal = ev.TaskSignal;
  return d;
}

/** A fresh pending TaskState. */
export function newTaskState(): TaskState {
  return { State: 'pending', Failed: false, Restarts: 0, LastRestart: null, StartedAt: null, FinishedAt: null, Events: [] };
}

/**
 * Appends an event to a TaskState in place, keeping the last MAX_TASK_EVENTS, and applies its
 * side effects: FailsTask marks the task failed; Restarting counts a restart.
 */
export function appendTaskEvent(state: TaskState, ev: TaskEvent): void {
  state.Events.push(ev);
  if (state.Events.length > MAX_TASK_EVENTS) state.Events.splice(0, state.Events.length - MAX_TASK_EVENTS);
  if (ev.FailsTask) state.Failed = true;
  if (ev.Type === TaskEventType.Restarting) {
    state.Restarts++;
    state.LastRestart = new Date(Math.floor(ev.Time / 1e6)).toISOString();
  }
}
