/**
 * Positional reads of a file that may be growing, shrinking or vanishing under the reader
 * (a task's log being written and rotated). Every open goes through the confinement check
 * (src/fs/confined-fs.ts): what was opened must be a regular file inside `root`.
 */
import { constants } from 'node:fs';
import { lstat, open, readlink, type FileHandle } from 'node:fs/promises';
import { ConfinementCode, ConfinementError, isInside } from '../../fs/confined-fs.js';

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
 * real location is inside `realRoot`. Undefined if the file does not exist (any more).
 */
export async function openConfinedRead(path: string, realRoot: string): Promise<FileHandle | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new ConfinementError(ConfinementCode.Escape, `${path} is a symlink; refused`, { cause: err });
    throw err;
  }
  try {
    const real = await readlink(`/proc/self/fd/${fh.fd}`);
    if (!isInside(realRoot, real)) throw new ConfinementError(ConfinementCode.Escape, `${path} resolves outside the allocation directory`);
    if (!(await fh.stat()).isFile()) throw new ConfinementError(ConfinementCode.NotRegular, `${path} is not a regular file`);
  } catch (err) {
    await fh.close();
    throw err;
  }
  return fh;
}

/**
 * Reads up to `max` bytes at `pos` of the file at `path`, confined to `realRoot`; an empty buffer
 * at end of file, undefined if the file is gone.
 */
export async function readChunk(path: string, pos: number, max: number, realRoot: string): Promise<Buffer | undefined> {
  const fh = await openConfinedRead(path, realRoot);
  if (fh === undefined) return undefined;
  try {
    const buf = Buffer.allocUnsafe(max);
    const { bytesRead } = await fh.read(buf, 0, max, pos);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
