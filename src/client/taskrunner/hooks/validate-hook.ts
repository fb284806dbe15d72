/** The validate hook: refuses to start a task whose definition cannot work (unrecoverable). */
import { ClientError, ClientErrorCode } from '../../client-error.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';

/** Checks driver, name, kill signal and user before every start. */
export class ValidateHook implements PrestartHook {
  readonly name = 'validate';

  async prestart(req: TaskHookRequest): Promise<Partial<TaskPrep>> {
    const { task } = req;
    const problems: string[] = [];
    if (!task.Name) problems.push('task name is required');
    if (!task.Driver) problems.push('driver is required');
    else if (task.Driver !== req.driver.name) problems.push(`driver "${task.Driver}" does not match "${req.driver.name}"`);
    if (task.KillSignal && !/^SIG[A-Z0-9]+$/.test(task.KillSignal)) problems.push(`kill_signal "${task.KillSignal}" is not a signal name`);
    if (task.Config !== null && (typeof task.Config !== 'object' || Array.isArray(task.Config))) problems.push('config must be an object');
    if (problems.length > 0) {
      throw new ClientError(ClientErrorCode.BadTask, `task "${task.Name}": ${problems.join('; ')}`);
    }
    return {};
  }
}
