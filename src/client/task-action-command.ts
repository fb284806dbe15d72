/**
 * The command line of a task `action` (Nomad 1.7+): what `nomad action` and
 * `GET /v1/job/:id/action` run inside a task. The command comes only from the job the
 * allocation was placed with, never from the caller, so an action route cannot be turned into
 * an arbitrary exec.
 */
import type { Task, TaskAction } from '../structs/job.js';
import { ClientApiError, ClientApiErrorCode } from '../http/client-api-error.js';

/** The allocation an action runs in: its ID and the job it was placed for. */
export interface ActionAlloc {
  ID: string;
  JobID: string;
}

/**
 * `[Command, ...Args]` of the action `name` of `task` in `alloc`. Throws ClientApiError
 * ActionJobMismatch when the allocation is not of `jobId` (an action is addressed through its
 * job, so another job's allocation is refused), ActionNotFound when the task has no such action.
 * The name is matched exactly: it is never read as a path or a pattern.
 */
export function taskActionCommand(alloc: ActionAlloc, jobId: string, task: Task, name: string): string[] {
  if (alloc.JobID !== jobId) {
    throw new ClientApiError(ClientApiErrorCode.ActionJobMismatch, `allocation ${alloc.ID} is not an allocation of job "${jobId}"`);
  }
  const action: TaskAction | undefined = (task.Actions ?? []).find((a) => a.Name === name);
  if (!action) {
    const known = (task.Actions ?? []).map((a) => a.Name);
    const hint = known.length > 0 ? ` (the task's actions: ${known.join(', ')})` : ' (the task has no actions)';
    throw new ClientApiError(ClientApiErrorCode.ActionNotFound, `action ${JSON.stringify(name)} not found in task "${task.Name}"${hint}`);
  }
  return [action.Command, ...(action.Args ?? [])];
}
