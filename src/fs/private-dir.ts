/**
 * The agent's own state is readable by the agent's user only: the server's log (raft.db and
 * its WAL, which hold every token and every snapshot), the client's state database and node
 * secret. Directories are 0700 and files 0600, whatever user a task driver runs beside the
 * agent — a task must never read the management token from a world-readable WAL.
 *
 * SQLite gives a database's WAL and shared-memory files the mode of the database file, so a
 * database created 0600 (createPrivateFileSync) keeps its later files private too.
 */
import { chmodSync, closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Mode of the agent's private directories. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of the agent's private files. */
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `path` (and missing parents) as private directories, and makes `path` itself private if it existed. */
export function makePrivateDirSync(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  chmodSync(path, PRIVATE_DIR_MODE);
}

/** Creates `path` as an empty private file if missing; an existing file loses its group and other bits. */
export function createPrivateFileSync(path: string): void {
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
  try {
    const mode = fstatSync(fd).mode & 0o7777;
    if (mode & 0o077) fchmodSync(fd, mode & 0o700);
  } finally {
    closeSync(fd);
  }
}

/**
 * Removes group and other permissions from everything below `root` (and `root`), following no
 * symlink: fixes a data directory written by an older agent, whose files were 0644. Entries
 * named in `skip` (direct children of `root`) are left as they are.
 */
export function privatizeTreeSync(root: string, skip: readonly string[] = []): void {
  const walk = (path: string, top: boolean): void => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    if (st.mode & 0o077) chmodSync(path, st.mode & 0o700);
    if (!st.isDirectory()) return;
    for (const name of readdirSync(path)) {
      if (top && skip.includes(name)) continue;
      walk(join(path, name), false);
    }
  };
  walk(root, true);
}
