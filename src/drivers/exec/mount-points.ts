/**
 * The mount points of an exec task's host volumes, made on the host before bwrap binds the
 * volumes over them. The sandbox's `/` is the task directory and its `/alloc` the allocation's
 * shared directory, both writable by tasks: a task (this one on an earlier run, or a sibling in
 * /alloc) may have left a symlink where a mount point goes, and bwrap, running as root, would
 * follow it out of the sandbox. So every component of the path is made here without following
 * symlinks, and a symlink anywhere on the way refuses the start.
 */
import { closeSync, lstatSync, mkdirSync, openSync, constants as fsConstants } from 'node:fs';
import { join } from 'node:path';
import { DriverError, DriverErrorCode, type TaskMount } from '../driver.js';

function refuse(mount: TaskMount, why: string): DriverError {
  return new DriverError(DriverErrorCode.BadConfig, `exec: volume mount at ${JSON.stringify(mount.taskPath)}: ${why}`, false);
}

/** True when `path` is `dir` or lies under it (both absolute and normalized). */
function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/**
 * Creates the mount point of each mount inside the task's root (a directory, or an empty file
 * when the volume is a file) and refuses any path through a symlink, through a non-directory, or
 * under a host directory the sandbox binds read-only (`chrootEnv`'s destinations), where a mount
 * point would have to be made on the host itself. Idempotent: existing mount points are kept.
 */
export function prepareMountPoints(taskDir: string, sharedAllocDir: string, chrootEnv: Readonly<Record<string, string>>, mounts: readonly TaskMount[]): void {
  for (const m of mounts) {
    if (m.propagationMode === 'bidirectional') throw refuse(m, 'propagation_mode "bidirectional" is not supported by the exec driver');
    for (const dest of Object.values(chrootEnv)) {
      if (within(m.taskPath, dest.replace(/\/+$/, '') || '/') && dest !== '/') throw refuse(m, `it is under ${dest}, which the sandbox binds read-only from the host (chroot_env)`);
    }
    const inAlloc = within(m.taskPath, '/alloc');
    const base = inAlloc ? sharedAllocDir : taskDir;
    const rel = inAlloc ? m.taskPath.slice('/alloc'.length) : m.taskPath;
    const parts = rel.split('/').filter((p) => p !== '');
    if (parts.length === 0) throw refuse(m, inAlloc ? 'the allocation directory itself cannot be a mount point' : "the task's root cannot be a mount point");
    let isDir: boolean;
    try {
      isDir = lstatSync(m.hostPath).isDirectory();
    } catch (err) {
      throw new DriverError(DriverErrorCode.StartFailed, `exec: host volume path ${m.hostPath} is gone: ${(err as Error).message}`, true, { cause: err });
    }
    let cur = base;
    for (const [i, part] of parts.entries()) {
      cur = join(cur, part);
      const last = i === parts.length - 1;
      let st: ReturnType<typeof lstatSync> | undefined;
      try {
        st = lstatSync(cur);
      } catch {
        st = undefined;
      }
      if (st?.isSymbolicLink()) throw refuse(m, `${JSON.stringify('/' + (inAlloc ? 'alloc/' : '') + parts.slice(0, i + 1).join('/'))} is a symlink`);
      if (st) {
        if (!last && !st.isDirectory()) throw refuse(m, `${part} is not a directory`);
        if (last && st.isDirectory() !== isDir) throw refuse(m, `the mount point exists as a ${st.isDirectory() ? 'directory' : 'file'} but the volume is a ${isDir ? 'directory' : 'file'}`);
        continue;
      }
      if (!last || isDir) mkdirSync(cur, { mode: 0o755 });
      // O_EXCL and O_NOFOLLOW: never through a symlink made since the lstat above.
      else closeSync(openSync(cur, fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_WRONLY | fsConstants.O_NOFOLLOW, 0o644));
    }
  }
}
