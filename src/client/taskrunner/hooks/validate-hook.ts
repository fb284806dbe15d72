/** The validate hook: refuses to start a task whose definition cannot work (unrecoverable). */
import { readFileSync } from 'node:fs';
import { ClientError, ClientErrorCode } from '../../client-error.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { parsePasswd, refusedTaskUser, taskUserPolicy, type PasswdEntry, type TaskUserPolicy } from '../task-user-policy.js';

/** The host's accounts, read at each check (an account added since the agent started counts). */
function hostPasswd(): PasswdEntry[] {
  try {
    return parsePasswd(readFileSync('/etc/passwd', 'utf8'));
  } catch {
    return [];
  }
}

/** Checks driver, name, kill signal and user (the client's user.denylist) before every start. */
export class ValidateHook implements PrestartHook {
  readonly name = 'validate';

  /** `users`: the client's user policy; Nomad's defaults (root refused for exec) when not given. */
  constructor(
    private readonly users: TaskUserPolicy = taskUserPolicy(),
    private readonly passwd: () => readonly PasswdEntry[] = hostPasswd,
  ) {}

  async prestart(req: TaskHookRequest): Promise<Partial<TaskPrep>> {
    const { task } = req;
    const problems: string[] = [];
    if (!task.Name) problems.push('task name is required');
    if (!task.Driver) problems.push('driver is required');
    else if (task.Driver !== req.driver.name) problems.push(`driver "${task.Driver}" does not match "${req.driver.name}"`);
    if (task.KillSignal && !/^SIG[A-Z0-9]+$/.test(task.KillSignal)) problems.push(`kill_signal "${task.KillSignal}" is not a signal name`);
    if (task.Config !== null && (typeof task.Config !== 'object' || Array.isArray(task.Config))) problems.push('config must be an object');
    const refused = task.Driver ? refusedTaskUser(this.users, task.Driver, task.User ?? '', this.passwd) : null;
    if (refused) problems.push(refused);
    if (problems.length > 0) {
      throw new ClientError(ClientErrorCode.BadTask, `task "${task.Name}": ${problems.join('; ')}`);
    }
    return {};
  }
}
