/** The task-dir hook: creates the task's local/, secrets/ and tmp/ before each start. */
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';

/** Builds the task directory and hands its paths to later hooks. */
export class TaskDirHook implements PrestartHook {
  readonly name = 'task-dir';

  async prestart(req: TaskHookRequest): Promise<Partial<TaskPrep>> {
    await req.allocDir.build();
    const dirs = await req.allocDir.buildTaskDir(req.task.Name);
    return { dirs };
  }
}
