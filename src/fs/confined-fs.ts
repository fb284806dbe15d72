/**
 * The one confinement check for every file the agent reads or writes on a task's behalf (log
 * files, the fs/logs API, templates, artifacts, dispatch payloads). A task owns its directories
 * and can plant symlinks, FIFOs or hard links in them at any moment, while the agent runs as
 * root: a path checked and then opened by name can be swapped in between.
 *
 * Two mechanisms, both race-free:
 * - Reads that may follow symlinks *inside* the root (Nomad's `alloc fs`): open first, then ask
 *   the kernel where the open descriptor really is (`/proc/self/fd/N`) and refuse it unless it
 *   is inside the root. Opened non-blocking, so a planted FIFO cannot hang the agent.
 * - Writes and log reads follow no symlink at all: the directory is walked one component at a
 *   time with O_NOFOLLOW from the root's descriptor, and the file is opened relative to the
 *   walked descriptor (`/proc/self/fd/N/name`, Linux's openat without native bindings). The
 *   opened object must be a regular file.
 */
import { CaravanError, type CaravanErrorOptions } from '../structs/caravan-error.js';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readlinkSync, realpathSync, unlinkSync, type Stats } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { getSystemErrorMap } from 'node:util';

/** Why a path was refused. */
export const ConfinementCode = {
  BadPath: 'CONFINE_BAD_PATH',
  Escape: 'CONFINE_PATH_ESCAPE',
  NotFound: 'CONFINE_NOT_FOUND',
  NotRegular: 'CONFINE_NOT_REGULAR_FILE',
} as const;
export type ConfinementCode = (typeof ConfinementCode)[keyof typeof ConfinementCode];

/** A path the confinement refused; `code` says why. */
export class ConfinementError extends CaravanError<ConfinementCode> {
  constructor(code: ConfinementCode, reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'ConfinementError';
  }
}

// libuv opens every descriptor close-on-exec already.
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** Whether `p` is `root` or below it (both absolute and normalized). */
export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

/** The path through which `name` inside the directory open as `dirFd` is reached without re-resolving the directory. */
export function pathAt(dirFd: number, name: string): string {
  return `/proc/self/fd/${dirFd}/${name}`;
}

/**
 * Splits `requested` (relative to the root; a leading "/" means the root) into its components,
 * refusing NUL bytes and any `..` that climbs above the root.
 */
export function confinedComponents(requested: string): string[] {
  if (requested.includes('\0')) throw new ConfinementError(ConfinementCode.BadPath, 'path must not contain NUL bytes');
  const lexical = normalize('/' + requested);
  if (lexical.split('/').includes('..')) {
    throw new ConfinementError(ConfinementCode.Escape, `path ${JSON.stringify(requested)} is outside the allowed directory`);
  }
  return lexical.split('/').filter((c) => c !== '' && c !== '.');
}

/** How errors name the root: its path is the agent's layout, so it is never named. */
const ROOT = 'the allowed directory';

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/**
 * A system error as "EACCES (permission denied)": never its message, which Node writes with the
 * absolute path on disk — the agent's directory layout, not for the callers of its API.
 */
export function errnoReason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const known = typeof e.errno === 'number' ? getSystemErrorMap().get(e.errno) : undefined;
  if (known) return `${known[0]} (${known[1]})`;
  return typeof e.code === 'string' ? e.code : 'I/O error';
}

/**
 * The ConfinementError for a failed open or resolve of `what` (a description naming only the
 * path the caller gave, e.g. `file "local/x"`): symlinks and escapes 403, missing 404. Its
 * message never carries the system error's own text, which names the absolute path.
 */
export function confinementRefusal(err: unknown, what: string): ConfinementError {
  const code = errnoOf(err);
  if (code === 'ELOOP') {
    return new ConfinementError(ConfinementCode.Escape, `${what} is a symlink; refused`, { cause: err });
  }
  if (code === 'ENOENT') return new ConfinementError(ConfinementCode.NotFound, `${what} not found`, { cause: err });
  // O_DIRECTORY|O_NOFOLLOW on a symlink fails with ENOTDIR.
  if (code === 'ENOTDIR') return new ConfinementError(ConfinementCode.Escape, `${what} is a symlink or not a directory; refused`, { cause: err });
  if (code === 'ENXIO') return new ConfinementError(ConfinementCode.NotRegular, `${what} is not a regular file`, { cause: err });
  return new ConfinementError(ConfinementCode.Escape, `${what}: ${errnoReason(err)}`, { cause: err });
}

/**
 * Opens the directory `rel` below `root` without following any symlink on the way (the root
 * itself is trusted, it is the agent's). With `create`, missing directories are made (mode
 * `mode`). Returns a directory descriptor the caller closes.
 */
export function openDirNoFollowSync(root: string, rel: string, opts: { create?: boolean; mode?: number } = {}): number {
  let fd: number;
  try {
    if (opts.create) mkdirSync(root, { recursive: true, ...(opts.mode !== undefined ? { mode: opts.mode } : {}) });
    fd = openSync(root, O_RDONLY | O_DIRECTORY);
  } catch (err) {
    throw confinementRefusal(err, ROOT);
  }
  let walked = '';
  for (const comp of confinedComponents(rel)) {
    walked = walked ? `${walked}/${comp}` : comp;
    const at = pathAt(fd, comp);
    try {
      if (opts.create) {
        try {
          mkdirSync(at, opts.mode ?? 0o777);
        } catch (err) {
          if (errnoOf(err) !== 'EEXIST') throw err;
        }
      }
      const next = openSync(at, DIR_FLAGS);
      closeSync(fd);
      fd = next;
    } catch (err) {
      closeSync(fd);
      throw confinementRefusal(err, `directory ${JSON.stringify(walked)}`);
    }
  }
  return fd;
}

/** Checks that the descriptor is a regular file with no other name (not a hard link the task made to a host file). */
function assertRegular(fd: number, st: Stats, what: string): void {
  if (!st.isFile()) {
    closeSync(fd);
    throw new ConfinementError(ConfinementCode.NotRegular, `${what} is not a regular file`);
  }
  if (st.nlink > 1) {
    closeSync(fd);
    throw new ConfinementError(ConfinementCode.NotRegular, `${what} has ${st.nlink} hard links; refused`);
  }
}

/**
 * Opens `name` inside the open directory `dirFd` with `flags` (O_NOFOLLOW and O_NONBLOCK are
 * added), and checks it is a regular file with one link. Throws ConfinementError otherwise.
 */
export function openFileAtSync(dirFd: number, name: string, flags: number, mode = 0o644): number {
  if (name.includes('/') || name === '..' || name === '.' || name === '') {
    throw new ConfinementError(ConfinementCode.BadPath, `invalid file name ${JSON.stringify(name)}`);
  }
  let fd: number;
  try {
    fd = openSync(pathAt(dirFd, name), flags | O_NOFOLLOW | O_NONBLOCK, mode);
  } catch (err) {
    throw confinementRefusal(err, `file ${JSON.stringify(name)}`);
  }
  assertRegular(fd, fstatSync(fd), `file ${JSON.stringify(name)}`);
  return fd;
}

/** Opens the file `rel` below `root` following no symlink (see openDirNoFollowSync / openFileAtSync). */
export function openNoFollowSync(root: string, rel: string, flags: number, opts: { mode?: number; createDirs?: boolean } = {}): number {
  const comps = confinedComponents(rel);
  const name = comps.pop();
  if (name === undefined) throw new ConfinementError(ConfinementCode.BadPath, `path ${JSON.stringify(rel)} names no file`);
  const dirFd = openDirNoFollowSync(root, comps.join('/'), { create: opts.createDirs ?? false });
  try {
    return openFileAtSync(dirFd, name, flags, opts.mode);
  } finally {
    closeSync(dirFd);
  }
}

/** Names in the open directory `dirFd`; [] if it cannot be read. */
export function readDirAtSync(dirFd: number): string[] {
  try {
    return readdirSync(`/proc/self/fd/${dirFd}`);
  } catch {
    return [];
  }
}

/** Removes the entry `name` (a symlink itself, never its target) from the open directory `dirFd`; false if it was not there. */
export function unlinkAtSync(dirFd: number, name: string): boolean {
  try {
    unlinkSync(pathAt(dirFd, name));
    return true;
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return false;
    throw err;
  }
}

/** Where the open descriptor really is, as the kernel resolved it. */
export function realPathOfFdSync(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`);
}

/** The real path of a directory the agent owns; throws NotFound when it does not exist. */
export function realRootSync(root: string): string {
  try {
    return realpathSync(root);
  } catch (err) {
    throw confinementRefusal(err, ROOT);
  }
}

/** A path below a root, resolved (symlinks inside the root allowed). */
export interface ConfinedPath {
  /** Absolute, symlink-free path on disk. */
  absolute: string;
  /** Relative to the root, "/"-separated; "" for the root itself. */
  relative: string;
}

/**
 * Resolves `requested` below `root`, following symlinks, and refuses it unless the result is
 * inside the root. For listing and stat; a file's content is read with openInside, which checks
 * what was actually opened.
 */
export async function resolveInside(root: string, requested: string): Promise<ConfinedPath> {
  confinedComponents(requested);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch (err) {
    throw confinementRefusal(err, ROOT);
  }
  const lexical = normalize(join(realRoot, requested));
  if (!isInside(realRoot, lexical)) {
    throw new ConfinementError(ConfinementCode.Escape, `path ${JSON.stringify(requested)} is outside the allowed directory`);
  }
  let real: string;
  try {
    real = await realpath(lexical);
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ConfinementError(ConfinementCode.NotFound, `file ${JSON.stringify(requested)} not found`, { cause: err });
    }
    if (code === 'ELOOP') throw new ConfinementError(ConfinementCode.Escape, `path ${JSON.stringify(requested)} has a symlink loop`, { cause: err });
    throw confinementRefusal(err, `path ${JSON.stringify(requested)}`);
  }
  if (!isInside(realRoot, real)) {
    throw new ConfinementError(ConfinementCode.Escape, `path ${JSON.stringify(requested)} resolves outside the allowed directory`);
  }
  return { absolute: real, relative: relative(realRoot, real).split(sep).join('/') };
}

/**
 * Opens `requested` below `root` for reading and checks, on the open descriptor, that it is a
 * regular file inside the root — whatever was swapped in after any earlier check.
 */
export async function openInside(root: string, requested: string): Promise<FileHandle> {
  const p = await resolveInside(root, requested);
  const realRoot = await realpath(root);
  let fh: FileHandle;
  try {
    fh = await open(p.absolute, O_RDONLY | O_NONBLOCK);
  } catch (err) {
    throw confinementRefusal(err, `file ${JSON.stringify(requested)}`);
  }
  try {
    const real = await readlink(`/proc/self/fd/${fh.fd}`);
    if (!isInside(realRoot, real)) {
      throw new ConfinementError(ConfinementCode.Escape, `path ${JSON.stringify(requested)} resolves outside the allowed directory`);
    }
    const st = await fh.stat();
    if (!st.isFile()) throw new ConfinementError(ConfinementCode.NotRegular, `path ${JSON.stringify(requested)} is not a regular file`);
  } catch (err) {
    await fh.close();
    throw err;
  }
  return fh;
}
