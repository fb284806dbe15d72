/**
 * Positional reads of a file that may be growing, shrinking or vanishing under the reader
 * (a task's log being written and rotated).
 */
import { open, stat } from 'node:fs/promises';

/** The size of `path`, or undefined if it does not exist (any more). */
export async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/** Reads up to `max` bytes at `pos`; an empty buffer at end of file, undefined if the file is gone. */
export async function readChunk(path: string, pos: number, max: number): Promise<Buffer | undefined> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buf = Buffer.allocUnsafe(max);
    const { bytesRead } = await fh.read(buf, 0, max, pos);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
