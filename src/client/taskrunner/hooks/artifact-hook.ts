/**
 * The artifact hook: before each start, fetches the task's artifacts into the task directory.
 * A source is an http(s) URL (downloaded, redirects checked) or a path inside the allocation
 * (the task directory or the shared `../alloc`), read without following any link; file://
 * URLs, absolute host paths and every other scheme are refused (getter/artifact-source.ts).
 * Archives are not unpacked: the fetched file is placed as it is.
 */
import { closeSync } from 'node:fs';
import { posix, relative } from 'node:path';
import type { TaskDirs } from '../../../drivers/driver.js';
import { copyConfinedSync, openForWriteInsideSync, unlinkInsideSync } from '../../../fs/confined-write.js';
import { ArtifactMode, type TaskArtifact } from '../../../structs/template.js';
import { errorMessage } from '../../client-error.js';
import { resolveInTaskDir } from '../../template/task-path.js';
import { ArtifactSourceError, LocalRoot, parseArtifactSource } from '../getter/artifact-source.js';
import { downloadToFd } from '../getter/http-download.js';
import type { PrestartHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { TaskSetupError } from '../task-setup-error.js';

/** Nomad's default `artifact { http_max_size }`: 100 GB. */
export const ARTIFACT_HTTP_MAX_BYTES = 100 * 1000 ** 3;

function copyLocal(a: TaskArtifact, root: LocalRoot, rel: string, dirs: TaskDirs, destRel: string): void {
  if (rel === '') throw new ArtifactSourceError(a.GetterSource, 'names a whole directory; name a file or directory inside it');
  const srcRoot = root === LocalRoot.Task ? dirs.dir : dirs.sharedAllocDir;
  // A directory copied into itself would never end.
  if (root === LocalRoot.Task && (destRel === rel || destRel.startsWith(`${rel}/`))) {
    throw new ArtifactSourceError(a.GetterSource, `destination ${JSON.stringify(a.RelativeDest)} is inside the source`);
  }
  const expect = a.GetterMode === ArtifactMode.File ? 'file' : a.GetterMode === ArtifactMode.Dir ? 'dir' : undefined;
  copyConfinedSync(srcRoot, rel, dirs.dir, destRel, { intoDir: a.GetterMode !== ArtifactMode.File, ...(expect ? { expect } : {}) });
}

async function download(a: TaskArtifact, url: URL, dirs: TaskDirs, destRel: string, signal: AbortSignal): Promise<void> {
  let fileRel = destRel;
  if (a.GetterMode !== ArtifactMode.File) {
    const name = posix.basename(decodeURIComponent(url.pathname));
    if (name === '' || name === '.' || name === '..') {
      throw new ArtifactSourceError(a.GetterSource, 'the URL names no file; use mode = "file" with a destination file');
    }
    fileRel = posix.join(destRel, name);
  }
  const fd = openForWriteInsideSync(dirs.dir, fileRel, 0o644);
  let done = false;
  try {
    await downloadToFd(url, fd, {
      source: a.GetterSource,
      headers: a.GetterHeaders ?? {},
      insecure: a.GetterInsecure,
      checksum: a.GetterOptions?.['checksum'],
      maxBytes: ARTIFACT_HTTP_MAX_BYTES,
      signal,
    });
    done = true;
  } finally {
    closeSync(fd);
    // A refused or failed download leaves nothing behind.
    if (!done) unlinkInsideSync(dirs.dir, fileRel);
  }
}

async function fetchOne(a: TaskArtifact, dirs: TaskDirs, signal: AbortSignal): Promise<void> {
  const src = parseArtifactSource(a.GetterSource);
  const destRel = relative(dirs.dir, resolveInTaskDir(dirs.dir, a.RelativeDest || 'local/', 'destination'));
  if (src.kind === 'local') copyLocal(a, src.root, src.rel, dirs, destRel);
  else await download(a, src.url, dirs, destRel, signal);
}

/** Fetches the task's artifacts into its directory; a refused or failed artifact fails the setup naming its source. */
export class ArtifactHook implements PrestartHook {
  readonly name = 'artifacts';

  async prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>> {
    const artifacts = req.task.Artifacts ?? [];
    if (artifacts.length === 0 || !prep.dirs) return {};
    for (const a of artifacts) {
      try {
        await fetchOne(a, prep.dirs, req.signal);
      } catch (err) {
        throw new TaskSetupError(`Artifact failed: ${errorMessage(err)}`, { cause: err });
      }
    }
    return {};
  }
}
