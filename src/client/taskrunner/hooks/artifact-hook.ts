/**
 * The artifact hook: before each start, copies the task's artifacts into the task directory.
 * Caravan has no network getter: only local sources (`file://…` URLs and absolute paths) are
 * fetched; any other source fails the task setup with a message saying so.
 */
import { stat } from 'node:fs/promises';
import { basename, isAbsolute, join, relative } from 'node:path';
import { copyInsideSync } from '../../../fs/confined-write.js';
import { fileURLToPath } from 'node:url';
import { ArtifactMode, type TaskArtifact } from '../../../structs/template.js';
import { errorMessage } from '../../client-error.js';
import { resolveInTaskDir } from '../../template/task-path.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { TaskSetupError } from '../task-setup-error.js';

/** The local path of an artifact source, or undefined when it is not a local file. */
export function localArtifactPath(source: string): string | undefined {
  if (source.startsWith('file://')) {
    try {
      return fileURLToPath(source);
    } catch {
      return undefined;
    }
  }
  return isAbsolute(source) ? source : undefined;
}

async function fetchOne(a: TaskArtifact, taskDir: string): Promise<void> {
  const src = localArtifactPath(a.GetterSource);
  if (src === undefined) {
    throw new Error(`source ${JSON.stringify(a.GetterSource)} is not a local file (only file:// URLs and absolute paths are fetched; no network getter)`);
  }
  const dest = relative(taskDir, resolveInTaskDir(taskDir, a.RelativeDest || 'local/', 'destination'));
  const info = await stat(src);
  if (a.GetterMode === ArtifactMode.File) {
    if (info.isDirectory()) throw new Error(`source ${JSON.stringify(a.GetterSource)} is a directory but mode is "file"`);
    copyInsideSync(src, taskDir, dest);
    return;
  }
  if (a.GetterMode === ArtifactMode.Dir && !info.isDirectory()) {
    throw new Error(`source ${JSON.stringify(a.GetterSource)} is not a directory but mode is "dir"`);
  }
  // Modes "any" and "dir": the destination is a directory the source is placed into.
  // Copied following no link the task may have planted in its directory.
  copyInsideSync(src, taskDir, info.isDirectory() ? dest : join(dest, basename(src)));
}

/** Copies local artifacts into the task directory. */
export class ArtifactHook implements PrestartHook {
  readonly name = 'artifacts';

  async prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>> {
    const artifacts = req.task.Artifacts ?? [];
    if (artifacts.length === 0 || !prep.dirs) return {};
    for (const a of artifacts) {
      try {
        await fetchOne(a, prep.dirs.dir);
      } catch (err) {
        throw new TaskSetupError(`Artifact failed: ${errorMessage(err)}`, { cause: err });
      }
    }
    return {};
  }
}
