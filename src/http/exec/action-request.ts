/**
 * The query of a task action request, `GET /v1/job/:job/action?action=NAME&allocID=…&task=…&tty=…`
 * (Nomad 1.7+, the route `nomad action` calls), validated so that a bad value is reported with
 * the parameter it came from. A `command` parameter is not read: the command an action runs is
 * the one its job declares (src/client/task-action-command.ts), whatever the caller sends.
 */
import { badRequest } from '../http-errors.js';
import { queryFlag, queryParam, type RawQuery } from '../query-options.js';

/** A validated action request. */
export interface ActionRequest {
  /** The job named in the path; the allocation must be one of its allocations. */
  jobId: string;
  action: string;
  allocId: string;
  task: string;
  tty: boolean;
}

/** Validates an action query; throws a 400 HttpError naming `action`, `allocID`, `task` or `tty`. */
export function parseActionRequest(jobId: string, query: RawQuery): ActionRequest {
  if (jobId === '') throw badRequest('missing job ID in /v1/job/:job_id/action');
  const action = queryParam(query, 'action') ?? '';
  if (action === '') throw badRequest('missing "action" parameter: the name of the task action to run');
  const allocId = queryParam(query, 'allocID') ?? '';
  if (allocId === '') throw badRequest('missing "allocID" parameter: the allocation to run the action in');
  const task = queryParam(query, 'task') ?? '';
  if (task === '') throw badRequest('missing "task" parameter: the task the action is declared in');
  return { jobId, action, allocId, task, tty: queryFlag(query, 'tty') };
}
