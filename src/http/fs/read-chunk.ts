/**
 * Positional reads of a file that may be growing, shrinking or vanishing under the reader
 * (a task's log being written and rotated). Every open goes through the confinement check
 * (src/fs/confined-fs.ts): what was opened must be a regular file inside `root`.
 */
import { constants } from 'node:fs';
import { lstat, open, readlink, type FileHandle } from 'node:fs/promises';
import { ConfinementCode, ConfinementError, confinementRefusal, isInside } from '../../fs/confined-fs.js';

/** The size of `path` (a symlink's own size, never its target's), or undefined if it does not exist (any more). */
export async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await lstat(path)).size;
  } catch {
    return undefined;
  }
}

/**
 * Opens `path` without following a final symlink and checks the descriptor: a regular file whose
 * real location is inside `realRoot`. Undefined if the file does not exist (any more). Errors
 * name the file as `name`, the allocation-relative path the caller gave, never `path`.
 */
export async function openConfinedRead(path: string, realRoot: string, name: string): Promise<FileHandle | undefined> {
  const what = `file ${JSON.stringify(name)}`;
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw confinementRefusal(err, what);
  }
  try {
    const real = await readlink(`/proc/self/fd/${fh.fd}`);
    if (!isInside(realRoot, real)) throw new ConfinementError(ConfinementCode.Escape, `${what} resolves outside the allocation directory`);
    if (!(await fh.stat()).isFile()) throw new ConfinementError(ConfinementCode.NotRegular, `${what} is not a regular file`);
  } catch (err) {
    await fh.close();
    throw err;
  }
  return fh;
}

/**
 * Reads up to `max` bytes at `pos` of the file at `path` (named `name` in errors), confined to
 * `realRoot`; an empty buffer at end of file, undefined if the file is gone.
 */
export async function readChunk(path: string, name: string, pos: number, max: number, realRoot: string): Promise<Buffer | undefined> {
  const fh = await openConfinedRead(path, realRoot, name);
  if (fh === undefined) return undefined;
  try {
    const buf = Buffer.allocUnsafe(max);
    const { bytesRead } = await fh.read(buf, 0, max, pos);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
