/**
 * The env hook: builds the task's NOMAD_* environment and interpolates `${…}` in the task's
 * env and driver config. Runs after task-dir, whose paths it needs.
 */
import { ClientError, ClientErrorCode } from '../../client-error.js';
import { buildTaskEnv, interpolateTaskConfig } from '../../taskenv/task-env.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { NO_HOST_ENV, type HostEnvLookup } from '../../taskenv/host-env.js';

/** Produces TaskConfig.env and the interpolated driver config. */
export class EnvHook implements PrestartHook {
  readonly name = 'env';

  constructor(private readonly hostEnv: HostEnvLookup = NO_HOST_ENV) {}

  async prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>> {
    if (!prep.dirs) throw new ClientError(ClientErrorCode.HookFailed, 'env hook needs the task directories');
    const te = buildTaskEnv({ alloc: req.alloc, group: req.group, task: req.task, node: req.node, dirs: prep.dirs, hostEnv: this.hostEnv, ...(req.allocAddress ? { allocAddress: req.allocAddress } : {}) });
    return { env: te.env, driverConfig: interpolateTaskConfig(req.task.Config ?? {}, te) };
  }
}
