/**
 * The allocation directory on disk:
 *
 *   <dataDir>/alloc/<allocId>/
 *     alloc/{data,logs,tmp}        shared by the tasks (NOMAD_ALLOC_DIR)
 *     <task>/{local,secrets,tmp}   one per task (NOMAD_TASK_DIR is local/)
 *
 * Building is idempotent; destroy removes the whole tree. An AllocDir made with
 * `onDisk: false` has the same paths but never touches the disk: the node simulator's mock
 * tasks read and write nothing there, and 60,000 allocations' trees would cost it more than
 * the clients themselves.
 */
import { closeSync, fchmodSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskDirs } from '../../drivers/driver.js';
import { openDirNoFollowSync } from '../../fs/confined-fs.js';

/** Paths and construction of one allocation's directory. */
export class AllocDir {
  /** `<dataDir>/alloc/<allocId>`. */
  readonly root: string;
  /** The shared directory `<root>/alloc`. */
  readonly sharedDir: string;
  readonly logDir: string;

  /** False: build, buildTaskDir and destroy do no I/O (see the file comment). */
  readonly onDisk: boolean;

  constructor(dataDir: string, readonly allocId: string, opts: { onDisk?: boolean } = {}) {
    this.onDisk = opts.onDisk ?? true;
    this.root = join(dataDir, 'alloc', allocId);
    this.sharedDir = join(this.root, 'alloc');
    this.logDir = join(this.sharedDir, 'logs');
  }

  /** Creates the shared directories. Safe to call again. */
  async build(): Promise<void> {
    if (!this.onDisk) return;
    // At once, not one after another: each is a trip through the thread pool on a task's way to running.
    await Promise.all(['data', 'logs', 'tmp'].map((d) => mkdir(join(this.sharedDir, d), { recursive: true })));
  }

  /** The directories of one task (no I/O). */
  taskDirs(taskName: string): TaskDirs {
    const dir = join(this.root, taskName);
    return {
      dir,
      localDir: join(dir, 'local'),
      secretsDir: join(dir, 'secrets'),
      tmpDir: join(dir, 'tmp'),
      sharedAllocDir: this.sharedDir,
      logDir: this.logDir,
    };
  }

  /** Creates a task's directories; secrets/ is private to the agent's user. Safe to call again. */
  async buildTaskDir(taskName: string): Promise<TaskDirs> {
    const dirs = this.taskDirs(taskName);
    if (!this.onDisk) return dirs;
    await mkdir(this.root, { recursive: true });
    // Built again when a task restarts, after the task could write here: walked without
    // following any symlink it planted, and secrets/ is made private through its descriptor,
    // never by name (a chmod by name would follow a `secrets -> /etc` link as root).
    for (const sub of ['local', 'tmp']) closeSync(openDirNoFollowSync(this.root, `${taskName}/${sub}`, { create: true }));
    const secrets = openDirNoFollowSync(this.root, `${taskName}/secrets`, { create: true });
    try {
      fchmodSync(secrets, 0o700);
    } finally {
      closeSync(secrets);
    }
    return dirs;
  }

  /** Creates the shared log directory (`alloc/logs`). Safe to call again. */
  async buildLogDir(): Promise<void> {
    if (this.onDisk) await mkdir(this.logDir, { recursive: true });
  }

  /** Removes the allocation's directory tree. */
  async destroy(): Promise<void> {
    if (!this.onDisk) return;
    await rm(this.root, { recursive: true, force: true });
  }
}
