/**
 * Confinement of client file-system requests to one allocation directory. A requested path is
 * relative to the allocation directory (a leading "/" means its root, as Nomad's `alloc fs`
 * does); whatever it names — after `..` and symlinks are resolved — must stay inside it.
 */
import { resolveInside, type ConfinedPath } from '../../fs/confined-fs.js';
import { HttpError, toCaravanError } from '../http-errors.js';

/** Codes of the file-system errors (statuses in the error catalogue). */
export const AllocFsErrorCode = {
  NotFound: 'ALLOC_FS_NOT_FOUND',
  IsDirectory: 'ALLOC_FS_IS_DIRECTORY',
  NotDirectory: 'ALLOC_FS_NOT_DIRECTORY',
} as const;
export type AllocFsErrorCode = (typeof AllocFsErrorCode)[keyof typeof AllocFsErrorCode];

/** An HttpError for a file-system request; the catalogue gives its status. */
export function allocFsError(code: AllocFsErrorCode, reason: string, cause?: unknown): HttpError<AllocFsErrorCode> {
  return new HttpError(code, { reason }, cause === undefined ? undefined : { cause });
}

/** A path inside an allocation: where it is on disk and how Nomad names it (no leading "/"). */
export type AllocPath = ConfinedPath;

/**
 * Resolves `requested` (the `path` query parameter) inside `allocDir` through the agent's one
 * confinement check (src/fs/confined-fs.ts). Throws 400 for a malformed path, 403 when it (or a
 * symlink on the way) leads outside the directory, 404 when nothing is there.
 */
export async function resolveAllocPath(allocDir: string, requested: string | undefined): Promise<AllocPath> {
  try {
    return await resolveInside(allocDir, requested ?? '/');
  } catch (err) {
    throw toCaravanError(err);
  }
}
