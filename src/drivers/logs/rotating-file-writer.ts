/**
 * A size-rotated log file set `<dir>/<prefix>.N`, the way Nomad's logmon writes
 * `<task>.stdout.0`, `<task>.stdout.1`, … Writes go to the highest-numbered file; when it
 * would exceed the size limit the writer moves on to N+1 and deletes files older than the
 * newest `maxFiles`.
 *
 * Synchronous on purpose: the supervisor pumps many tiny pipes and a blocking append of a
 * few KB is cheaper than a stream object per file, and it keeps ordering trivially correct.
 */
import { closeSync, constants, fstatSync, writeSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative } from 'node:path';
import {
  ConfinementCode,
  ConfinementError,
  openDirNoFollowSync,
  openFileAtSync,
  readDirAtSync,
  unlinkAtSync,
} from '../../fs/confined-fs.js';

/** Options of one rotating file set. */
export interface RotatingFileWriterOptions {
  dir: string;
  /**
   * The directory the agent trusts, above `dir` (default: `dir`'s parent, the allocation's
   * shared `alloc/` directory, a mount point inside a sandbox). From there on no symlink is
   * followed: the task owns `dir` and may plant anything in it.
   */
  root?: string;
  /** File name before the `.N` suffix, e.g. `web.stdout`. */
  prefix: string;
  maxFiles: number;
  maxFileSizeBytes: number;
}

/** Error raised for unusable writer options; `field` names the bad option. */
export class RotatingWriterConfigError extends Error {
  readonly code = 'LOG_ROTATOR_BAD_CONFIG';
  constructor(readonly field: string, message: string) {
    super(message);
    this.name = 'RotatingWriterConfigError';
  }
}

/** The indexes N of the names `<prefix>.N` among `names`, ascending. */
function logIndexes(names: string[], prefix: string): number[] {
  const out: number[] = [];
  const head = `${prefix}.`;
  for (const name of names) {
    if (!name.startsWith(head)) continue;
    const rest = name.slice(head.length);
    if (/^\d+$/.test(rest)) out.push(Number(rest));
  }
  return out.sort((a, b) => a - b);
}

/** Lists the indexes N of existing `<prefix>.N` files in dir, ascending. */
export function listLogIndexes(dir: string, prefix: string): number[] {
  let fd: number;
  try {
    fd = openDirNoFollowSync(dirname(dir), basename(dir));
  } catch {
    return [];
  }
  try {
    return logIndexes(readDirAtSync(fd), prefix);
  } finally {
    closeSync(fd);
  }
}

const { O_WRONLY, O_APPEND, O_CREAT, O_EXCL } = constants;
/** How many times a planted entry is removed before the writer gives its index up and moves on. */
const PLANT_RETRIES = 3;

/**
 * Appends bytes to a rotating file set. Reopening a set continues in its highest-numbered
 * file, so output written across process restarts is neither lost nor overwritten.
 *
 * The directory belongs to the task, the writer runs as root: files are opened relative to a
 * descriptor of the directory, never through a symlink, and only a regular, single-link file
 * owned by the agent is appended to. Anything else found under a log file's name (a symlink to
 * a host file, a FIFO, a hard link) is removed and replaced by a fresh file.
 */
export class RotatingFileWriter {
  private fd: number | null = null;
  private dirFd: number | null = null;
  private index = 0;
  private size = 0;
  private readonly opts: RotatingFileWriterOptions;
  private readonly root: string;

  constructor(opts: RotatingFileWriterOptions) {
    if (!Number.isInteger(opts.maxFiles) || opts.maxFiles < 1) {
      throw new RotatingWriterConfigError('max_files', `logs.max_files must be an integer ≥ 1, got ${opts.maxFiles}`);
    }
    if (!(opts.maxFileSizeBytes > 0)) {
      throw new RotatingWriterConfigError('max_file_size', `logs.max_file_size must be > 0, got ${opts.maxFileSizeBytes}`);
    }
    this.opts = opts;
    this.root = opts.root ?? dirname(opts.dir);
    const existing = logIndexes(readDirAtSync(this.openDir()), opts.prefix);
    this.index = existing.length > 0 ? existing[existing.length - 1]! : 0;
    this.openCurrent();
  }

  /** The index N of the file currently written. */
  get currentIndex(): number {
    return this.index;
  }

  /** Appends data, splitting it across files at the size limit. */
  write(data: Buffer | string): void {
    let buf = typeof data === 'string' ? Buffer.from(data) : data;
    while (buf.length > 0) {
      if (this.fd === null) this.openCurrent();
      let room = this.opts.maxFileSizeBytes - this.size;
      if (room <= 0) {
        this.rotate();
        room = this.opts.maxFileSizeBytes;
      }
      const chunk = buf.length <= room ? buf : buf.subarray(0, room);
      let off = 0;
      while (off < chunk.length) off += writeSync(this.fd!, chunk, off, chunk.length - off);
      this.size += chunk.length;
      buf = buf.subarray(chunk.length);
    }
  }

  /** Closes the current file; a later write reopens it. Idempotent. */
  close(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    if (this.dirFd !== null) {
      closeSync(this.dirFd);
      this.dirFd = null;
    }
  }

  private openDir(): number {
    if (this.dirFd === null) {
      const rel = relative(this.root, this.opts.dir);
      if (rel.startsWith('..') || isAbsolute(rel)) {
        throw new RotatingWriterConfigError('dir', `log dir ${this.opts.dir} is not below ${this.root}`);
      }
      this.dirFd = openDirNoFollowSync(this.root, rel, { create: true });
    }
    return this.dirFd;
  }

  /** Continues the current index's file if it is one the agent wrote, else starts it afresh. */
  private openCurrent(): void {
    const dirFd = this.openDir();
    const name = this.name(this.index);
    try {
      const fd = openFileAtSync(dirFd, name, O_WRONLY | O_APPEND);
      const st = fstatSync(fd);
      if (st.uid === process.geteuid?.()) {
        this.fd = fd;
        this.size = st.size;
        return;
      }
      closeSync(fd);
    } catch (err) {
      if (!(err instanceof ConfinementError)) throw err;
      // Not found: created below. Anything else is the task's plant: removed below.
    }
    this.createFresh();
  }

  /** Creates the file of the current index exclusively, removing whatever the task put under its name. */
  private createFresh(): void {
    const dirFd = this.openDir();
    for (let attempt = 0; ; attempt++) {
      const name = this.name(this.index);
      try {
        this.fd = openFileAtSync(dirFd, name, O_WRONLY | O_APPEND | O_CREAT | O_EXCL);
        this.size = 0;
        return;
      } catch (err) {
        if (!(err instanceof ConfinementError) && (err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        if (err instanceof ConfinementError && err.code === ConfinementCode.NotFound) throw err;
        if (attempt >= PLANT_RETRIES) {
          // The task keeps re-planting this name: leave it and write the next index.
          this.index += 1;
          attempt = -1;
          continue;
        }
        try {
          unlinkAtSync(dirFd, name);
        } catch {
          // A directory, or not ours to remove: skip this index.
          this.index += 1;
          attempt = -1;
        }
      }
    }
  }

  private rotate(): void {
    if (this.fd !== null) {
      closeSync(this.fd);
      this.fd = null;
    }
    this.index += 1;
    this.createFresh();
    // Keep the newest maxFiles files: everything at or below index - maxFiles goes.
    const cutoff = this.index - this.opts.maxFiles;
    const dirFd = this.openDir();
    for (const n of logIndexes(readDirAtSync(dirFd), this.opts.prefix)) {
      if (n > cutoff) break;
      unlinkAtSync(dirFd, this.name(n));
    }
  }

  private name(n: number): string {
    return `${this.opts.prefix}.${n}`;
  }
}

/** Bytes in a log size given in MB, as Nomad's `logs.max_file_size`. */
export function megabytes(mb: number): number {
  return Math.floor(mb * 1024 * 1024);
}
