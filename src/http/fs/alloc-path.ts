/**
 * Confinement of client file-system requests to one allocation directory. A requested path is
 * relative to the allocation directory (a leading "/" means its root, as Nomad's `alloc fs`
 * does); whatever it names — after `..` and symlinks are resolved — must stay inside it.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { HttpError } from '../http-errors.js';

/** Codes of the file-system errors; each maps to one HTTP status. */
export const AllocFsErrorCode = {
  BadPath: 'ALLOC_FS_BAD_PATH',
  Escape: 'ALLOC_FS_PATH_ESCAPE',
  NotFound: 'ALLOC_FS_NOT_FOUND',
  IsDirectory: 'ALLOC_FS_IS_DIRECTORY',
  NotDirectory: 'ALLOC_FS_NOT_DIRECTORY',
} as const;
export type AllocFsErrorCode = (typeof AllocFsErrorCode)[keyof typeof AllocFsErrorCode];

const STATUS: Record<AllocFsErrorCode, number> = {
  ALLOC_FS_BAD_PATH: 400,
  ALLOC_FS_PATH_ESCAPE: 403,
  ALLOC_FS_NOT_FOUND: 404,
  ALLOC_FS_IS_DIRECTORY: 400,
  ALLOC_FS_NOT_DIRECTORY: 400,
};

/** An HttpError for a file-system request, with the status its code implies. */
export function allocFsError(code: AllocFsErrorCode, message: string, cause?: unknown): HttpError {
  return new HttpError(code, STATUS[code], message, cause === undefined ? undefined : { cause });
}

/** A path inside an allocation: where it is on disk and how Nomad names it (no leading "/"). */
export interface AllocPath {
  /** Absolute, symlink-free path on disk. */
  absolute: string;
  /** Relative to the allocation directory, "/"-separated; "" for the root. */
  relative: string;
}

function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves `requested` (the `path` query parameter) inside `allocDir`. Throws 400 for a
 * malformed path, 403 when it (or a symlink on the way) leads outside the directory, 404 when
 * nothing is there.
 */
export async function resolveAllocPath(allocDir: string, requested: string | undefined): Promise<AllocPath> {
  const req = requested ?? '/';
  if (req.includes('\0')) throw allocFsError(AllocFsErrorCode.BadPath, 'path must not contain NUL bytes');
  let root: string;
  try {
    root = await realpath(allocDir);
  } catch (err) {
    throw allocFsError(AllocFsErrorCode.NotFound, `allocation directory ${allocDir} does not exist`, err);
  }
  // Normalize as if the request were rooted at "/", then check that `..` did not climb out.
  const lexical = normalize(join(root, req));
  if (!isInside(root, lexical)) {
    throw allocFsError(AllocFsErrorCode.Escape, `path ${JSON.stringify(req)} is outside the allocation directory`);
  }
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw allocFsError(AllocFsErrorCode.NotFound, `file ${JSON.stringify(req)} not found in the allocation directory`, err);
    }
    if (code === 'ELOOP') throw allocFsError(AllocFsErrorCode.Escape, `path ${JSON.stringify(req)} has a symlink loop`, err);
    throw err;
  }
  if (!isInside(root, real)) {
    throw allocFsError(AllocFsErrorCode.Escape, `path ${JSON.stringify(req)} resolves outside the allocation directory`);
  }
  return { absolute: real, relative: relative(root, real).split(sep).join('/') };
}
