/**
 * The logs hook: tells the driver where stdout/stderr go (`alloc/logs/<task>.stdout.N`) and how
 * they rotate, from the task's `logs` block (Nomad's defaults: 10 files of 10 MB).
 */
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';

const DEFAULT_MAX_FILES = 10;
const DEFAULT_MAX_FILE_SIZE_MB = 10;

/** Ensures the log directory exists and fills TaskConfig.logs. */
export class LogsHook implements PrestartHook {
  readonly name = 'logs';

  async prestart(req: TaskHookRequest): Promise<Partial<TaskPrep>> {
    const lc = req.task.LogConfig;
    const dir = req.allocDir.logDir;
    await req.allocDir.buildLogDir();
    return {
      logs: {
        dir,
        maxFiles: lc?.MaxFiles && lc.MaxFiles > 0 ? lc.MaxFiles : DEFAULT_MAX_FILES,
        maxFileSizeMB: lc?.MaxFileSizeMB && lc.MaxFileSizeMB > 0 ? lc.MaxFileSizeMB : DEFAULT_MAX_FILE_SIZE_MB,
      },
    };
  }
}
