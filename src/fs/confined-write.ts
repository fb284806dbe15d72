/**
 * Writes the agent makes into a task's directories on its behalf (templates, dispatch payloads,
 * artifacts), through the confinement of confined-fs.ts: directories are walked and created
 * without following symlinks, files are opened without following them and must be regular,
 * single-link files — a symlink or hard link the task planted at a destination is never
 * written through.
 */
import { closeSync, constants, fchmodSync, ftruncateSync, lstatSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfinementError, confinedComponents, openDirNoFollowSync, openFileAtSync, pathAt, unlinkAtSync } from './confined-fs.js';

const { O_WRONLY, O_CREAT } = constants;

/** Splits a relative path into its directory part and its file name. */
function splitName(rel: string): { dir: string; name: string } {
  const comps = confinedComponents(rel);
  const name = comps.pop();
  if (name === undefined) throw new ConfinementError('CONFINE_BAD_PATH', `path ${JSON.stringify(rel)} names no file`);
  return { dir: comps.join('/'), name };
}

function writeAt(dirFd: number, name: string, data: Buffer | string, mode: number): void {
  let fd: number;
  try {
    fd = openFileAtSync(dirFd, name, O_WRONLY | O_CREAT, mode);
  } catch (err) {
    if (!(err instanceof ConfinementError) || err.code === 'CONFINE_NOT_FOUND') throw err;
    // Something the task planted under this name (a symlink, a FIFO, a hard link): replace it.
    unlinkAtSync(dirFd, name);
    fd = openFileAtSync(dirFd, name, O_WRONLY | O_CREAT | constants.O_EXCL, mode);
  }
  try {
    // Truncated only now that the descriptor is known to be a regular file of its own.
    ftruncateSync(fd, 0);
    writeFileSync(fd, data);
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/** Writes `data` to `rel` below `root` with `mode`, creating missing directories, following no symlink. */
export function writeFileInsideSync(root: string, rel: string, data: Buffer | string, mode = 0o644): void {
  const { dir, name } = splitName(rel);
  const dirFd = openDirNoFollowSync(root, dir, { create: true });
  try {
    writeAt(dirFd, name, data, mode);
  } finally {
    closeSync(dirFd);
  }
}

/** Creates the directory `rel` below `root` (and its parents), following no symlink. */
export function mkdirInsideSync(root: string, rel: string): void {
  closeSync(openDirNoFollowSync(root, rel, { create: true }));
}

function copyTreeAt(src: string, dirFd: number): void {
  for (const ent of readdirSync(src, { withFileTypes: true })) {
    const from = join(src, ent.name);
    if (ent.isDirectory()) {
      const sub = openDirNoFollowSync(`/proc/self/fd/${dirFd}`, ent.name, { create: true });
      try {
        copyTreeAt(from, sub);
      } finally {
        closeSync(sub);
      }
    } else if (ent.isSymbolicLink()) {
      // Recreated as a link: the agent never follows links in a task directory, so it is harmless.
      unlinkAtSync(dirFd, ent.name);
      symlinkSync(readlinkSync(from), pathAt(dirFd, ent.name));
    } else if (ent.isFile()) {
      writeAt(dirFd, ent.name, readFileSync(from), lstatSync(from).mode & 0o7777);
    }
  }
}

/**
 * Copies the host file or directory `src` (an operator's artifact source) to `rel` below `root`:
 * a file to that path, a directory's entries into that directory.
 */
export function copyInsideSync(src: string, root: string, rel: string): void {
  const st = lstatSync(src);
  if (!st.isDirectory()) {
    writeFileInsideSync(root, rel, readFileSync(src), st.mode & 0o7777);
    return;
  }
  const dirFd = openDirNoFollowSync(root, rel, { create: true });
  try {
    copyTreeAt(src, dirFd);
  } finally {
    closeSync(dirFd);
  }
}
