/**
 * The query of an exec request (`?task=T&command=["/bin/sh","-c","…"]&tty=true`), validated so
 * that a bad value is reported with the parameter it came from.
 */
import { badRequest } from '../http-errors.js';
import { queryFlag, queryParam, type RawQuery } from '../query-options.js';

/** A validated exec request. */
export interface ExecRequest {
  task: string;
  command: string[];
  tty: boolean;
}

/** Validates an exec query; throws a 400 HttpError naming `task`, `command` or `tty`. */
export function parseExecRequest(query: RawQuery): ExecRequest {
  const task = queryParam(query, 'task') ?? '';
  if (task === '') throw badRequest('missing "task" parameter: the task to run the command in');
  const rawCommand = queryParam(query, 'command');
  if (rawCommand === undefined || rawCommand === '') {
    throw badRequest('missing "command" parameter: a JSON array of strings');
  }
  let command: unknown;
  try {
    command = JSON.parse(rawCommand);
  } catch {
    throw badRequest(`invalid value for "command": ${JSON.stringify(rawCommand)} is not JSON (want an array of strings)`);
  }
  if (!Array.isArray(command) || command.length === 0 || !command.every((c) => typeof c === 'string')) {
    throw badRequest('invalid value for "command": want a non-empty JSON array of strings');
  }
  if (command[0] === '') throw badRequest('invalid value for "command": command[0] must not be empty');
  return { task, command: command as string[], tty: queryFlag(query, 'tty') };
}
