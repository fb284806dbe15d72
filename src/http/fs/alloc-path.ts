/**
 * Confinement of client file-system requests to one allocation directory. A requested path is
 * relative to the allocation directory (a leading "/" means its root, as Nomad's `alloc fs`
 * does); whatever it names — after `..` and symlinks are resolved — must stay inside it.
 */
import { confinementRefusal, resolveInside, type ConfinedPath } from '../../fs/confined-fs.js';
import { CaravanError } from '../../structs/caravan-error.js';
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

/**
 * The error to answer for a failure while serving `requested` (the path the caller gave) from an
 * allocation directory. Caravan's own errors pass as they are: their messages name only what
 * the caller gave. Anything else — above all a system error, whose message Node writes with the
 * absolute path on disk, the agent's directory layout — is answered naming `requested` and the
 * errno only; the original stays the cause, for the agent's log.
 */
export function allocFsFailure(err: unknown, requested: string): CaravanError {
  if (err instanceof CaravanError) return err;
  const path = JSON.stringify(requested);
  switch ((err as NodeJS.ErrnoException | null)?.code) {
    case undefined:
      return new HttpError('HTTP_INTERNAL', { reason: `cannot serve path ${path}` }, { cause: err });
    case 'ENOENT':
    case 'ENOTDIR':
      return allocFsError(AllocFsErrorCode.NotFound, `file ${path} not found`, err);
    case 'EISDIR':
      return allocFsError(AllocFsErrorCode.IsDirectory, `path ${path} is a directory`, err);
    default:
      return confinementRefusal(err, `path ${path}`);
  }
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
