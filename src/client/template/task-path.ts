/** Resolution of paths a job gives relative to the task directory, refusing ones that escape it. */
import { CaravanError } from '../../structs/caravan-error.js';
import { isAbsolute, relative, resolve } from 'node:path';

/** A template or artifact path that would land outside the task directory. */
export class TaskPathEscapeError extends CaravanError<'TASK_PATH_ESCAPE'> {
  constructor(
    readonly field: string,
    readonly path: string,
  ) {
    super('TASK_PATH_ESCAPE', { field, path: JSON.stringify(path) });
    this.name = 'TaskPathEscapeError';
  }
}

/** The absolute path of `path` under `taskDir`; throws TaskPathEscapeError when it leaves it. */
export function resolveInTaskDir(taskDir: string, path: string, field: string): string {
  const target = resolve(taskDir, path);
  const rel = relative(taskDir, target);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new TaskPathEscapeError(field, path);
  return target;
}
