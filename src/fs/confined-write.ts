/**
 * Writes the agent makes into a task's directories on its behalf (templates, dispatch payloads,
 * artifacts), through the confinement of confined-fs.ts: directories are walked and created
 * without following symlinks, files are opened without following them and must be regular,
 * single-link files — a symlink or hard link the task planted at a destination is never
 * written through. Copies read their source the same way: only from below a root the agent
 * chose (the task's or the allocation's directory), never a host path.
 */
import { closeSync, constants, fchmodSync, fstatSync, ftruncateSync, lstatSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfinementError, confinedComponents, openDirNoFollowSync, openFileAtSync, pathAt, readDirAtSync, unlinkAtSync } from './confined-fs.js';

const { O_WRONLY, O_CREAT } = constants;

/** Splits a relative path into its directory part and its file name. */
function splitName(rel: string): { dir: string; name: string } {
  const comps = confinedComponents(rel);
  const name = comps.pop();
  if (name === undefined) throw new ConfinementError('CONFINE_BAD_PATH', `path ${JSON.stringify(rel)} names no file`);
  return { dir: comps.join('/'), name };
}

/**
 * Opens `name` in the open directory `dirFd` for writing, as a regular single-link file of its
 * own (whatever the task planted under that name is replaced, never written through), emptied,
 * with `mode`. The caller closes it.
 */
function openWriteAt(dirFd: number, name: string, mode: number): number {
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
    fchmodSync(fd, mode);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

function writeAt(dirFd: number, name: string, data: Buffer | string, mode: number): void {
  const fd = openWriteAt(dirFd, name, mode);
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** Opens `rel` below `root` for writing (see openWriteAt), creating missing directories, following no symlink. */
export function openForWriteInsideSync(root: string, rel: string, mode = 0o644): number {
  const { dir, name } = splitName(rel);
  const dirFd = openDirNoFollowSync(root, dir, { create: true });
  try {
    return openWriteAt(dirFd, name, mode);
  } finally {
    closeSync(dirFd);
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

/** Removes the file `rel` below `root` (a link itself, never its target); false if it was not there. */
export function unlinkInsideSync(root: string, rel: string): boolean {
  const { dir, name } = splitName(rel);
  const dirFd = openDirNoFollowSync(root, dir);
  try {
    return unlinkAtSync(dirFd, name);
  } finally {
    closeSync(dirFd);
  }
}

/** Creates the directory `rel` below `root` (and its parents), following no symlink. */
export function mkdirInsideSync(root: string, rel: string): void {
  closeSync(openDirNoFollowSync(root, rel, { create: true }));
}

/** What a confined source is, looked at without following it. */
function kindAt(dirFd: number, name: string): 'dir' | 'file' | 'symlink' | 'other' {
  const st = lstatSync(pathAt(dirFd, name));
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  if (st.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** Reads the regular, single-link file `name` of the open directory `dirFd` (no link followed). */
function readFileAt(dirFd: number, name: string): { data: Buffer; mode: number } {
  const fd = openFileAtSync(dirFd, name, constants.O_RDONLY);
  try {
    return { data: readFileSync(fd), mode: fstatSync(fd).mode & 0o777 };
  } finally {
    closeSync(fd);
  }
}

function copyTreeAt(srcFd: number, dstFd: number): void {
  for (const name of readDirAtSync(srcFd)) {
    switch (kindAt(srcFd, name)) {
      case 'dir': {
        const from = openDirNoFollowSync(`/proc/self/fd/${srcFd}`, name);
        try {
          const to = openDirNoFollowSync(`/proc/self/fd/${dstFd}`, name, { create: true });
          try {
            copyTreeAt(from, to);
          } finally {
            closeSync(to);
          }
        } finally {
          closeSync(from);
        }
        break;
      }
      case 'file': {
        const { data, mode } = readFileAt(srcFd, name);
        writeAt(dstFd, name, data, mode);
        break;
      }
      case 'symlink':
        // Recreated as a link, never followed: the task could have made it itself.
        unlinkAtSync(dstFd, name);
        symlinkSync(readlinkSync(pathAt(srcFd, name)), pathAt(dstFd, name));
        break;
      case 'other':
        // FIFOs, sockets and devices are not copied.
        break;
    }
  }
}

/**
 * Copies `srcRel` below `srcRoot` to `destRel` below `destRoot`, both confined (no symlink
 * followed, no `..` above a root): a file to `destRel` (or into it, named as the source, with
 * `intoDir`), a directory's entries into `destRel`. The source itself must not be a symlink,
 * and must be of the kind `expect` says when given. Returns what was copied.
 */
export function copyConfinedSync(srcRoot: string, srcRel: string, destRoot: string, destRel: string, opts: { intoDir?: boolean; expect?: 'file' | 'dir' } = {}): 'file' | 'dir' {
  const { dir, name } = splitName(srcRel);
  const parentFd = openDirNoFollowSync(srcRoot, dir);
  try {
    let kind: ReturnType<typeof kindAt>;
    try {
      kind = kindAt(parentFd, name);
    } catch (err) {
      throw new ConfinementError('CONFINE_NOT_FOUND', `${JSON.stringify(srcRel)} not found`, { cause: err });
    }
    if (kind === 'symlink') throw new ConfinementError('CONFINE_PATH_ESCAPE', `${JSON.stringify(srcRel)} is a symlink; refused`);
    if (kind === 'other') throw new ConfinementError('CONFINE_NOT_REGULAR_FILE', `${JSON.stringify(srcRel)} is not a regular file or directory`);
    if (opts.expect === 'file' && kind === 'dir') throw new ConfinementError('CONFINE_BAD_PATH', `${JSON.stringify(srcRel)} is a directory but mode is "file"`);
    if (opts.expect === 'dir' && kind === 'file') throw new ConfinementError('CONFINE_BAD_PATH', `${JSON.stringify(srcRel)} is not a directory but mode is "dir"`);
    if (kind === 'file') {
      const { data, mode } = readFileAt(parentFd, name);
      writeFileInsideSync(destRoot, opts.intoDir ? join(destRel, name) : destRel, data, mode);
      return 'file';
    }
    const from = openDirNoFollowSync(`/proc/self/fd/${parentFd}`, name);
    try {
      const to = openDirNoFollowSync(destRoot, destRel, { create: true });
      try {
        copyTreeAt(from, to);
      } finally {
        closeSync(to);
      }
    } finally {
      closeSync(from);
    }
    return 'dir';
  } finally {
    closeSync(parentFd);
  }
}
