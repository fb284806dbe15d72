/** Test factory for driver TaskConfigs with real task/log directories under a temp root. */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskConfig, TaskLogConfig } from '../../src/drivers/driver.js';

/** A fresh temp dir for one test file. */
export function tempRoot(prefix = 'caravan-drv-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

let seq = 0;

/** A TaskConfig for `driverConfig`, with its alloc dir created under root. */
export function mockTaskConfig(
  root: string,
  driverConfig: Record<string, unknown>,
  overrides: Omit<Partial<TaskConfig>, 'logs'> & { logs?: Partial<TaskLogConfig> } = {},
): TaskConfig {
  const allocId = `alloc-${process.pid}-${++seq}`;
  const taskName = overrides.taskName ?? 'web';
  const allocDir = join(root, 'alloc', allocId);
  const dir = join(allocDir, taskName);
  const logDir = join(allocDir, 'alloc', 'logs');
  for (const d of [dir, join(dir, 'local'), join(dir, 'secrets'), join(dir, 'tmp'), logDir]) mkdirSync(d, { recursive: true });
  const { logs, ...rest } = overrides;
  return {
    id: `${allocId}/${taskName}`,
    allocId,
    taskName,
    jobName: 'example',
    groupName: 'group',
    driverConfig,
    env: { NOMAD_TASK_NAME: taskName, NOMAD_ALLOC_ID: allocId },
    user: '',
    dirs: {
      dir,
      localDir: join(dir, 'local'),
      secretsDir: join(dir, 'secrets'),
      tmpDir: join(dir, 'tmp'),
      sharedAllocDir: join(allocDir, 'alloc'),
      logDir,
    },
    resources: { cpuShares: 100, memoryMB: 64, memoryMaxMB: 0 },
    ...rest,
    logs: { dir: logDir, maxFiles: 10, maxFileSizeMB: 10, ...logs },
  };
}
