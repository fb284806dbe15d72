/**
 * A size-rotated log file set `<dir>/<prefix>.N`, the way Nomad's logmon writes
 * `<task>.stdout.0`, `<task>.stdout.1`, … Writes go to the highest-numbered file; when it
 * would exceed the size limit the writer moves on to N+1 and deletes files older than the
 * newest `maxFiles`.
 *
 * Synchronous on purpose: the supervisor pumps many tiny pipes and a blocking append of a
 * few KB is cheaper than a stream object per file, and it keeps ordering trivially correct.
 */
import { closeSync, mkdirSync, openSync, readdirSync, unlinkSync, writeSync, fstatSync } from 'node:fs';
import { join } from 'node:path';

/** Options of one rotating file set. */
export interface RotatingFileWriterOptions {
  dir: string;
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

/** Lists the indexes N of existing `<prefix>.N` files in dir, ascending. */
export function listLogIndexes(dir: string, prefix: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: number[] = [];
  const head = `${prefix}.`;
  for (const name of names) {
    if (!name.startsWith(head)) continue;
    const rest = name.slice(head.length);
    if (/^\d+$/.test(rest)) out.push(Number(rest));
  }
  return out.sort((a, b) => a - b);
}

/**
 * Appends bytes to a rotating file set. Reopening a set continues in its highest-numbered
 * file, so output written across process restarts is neither lost nor overwritten.
 */
export class RotatingFileWriter {
  private fd: number | null = null;
  private index = 0;
  private size = 0;
  private readonly opts: RotatingFileWriterOptions;

  constructor(opts: RotatingFileWriterOptions) {
    if (!Number.isInteger(opts.maxFiles) || opts.maxFiles < 1) {
      throw new RotatingWriterConfigError('max_files', `logs.max_files must be an integer ≥ 1, got ${opts.maxFiles}`);
    }
    if (!(opts.maxFileSizeBytes > 0)) {
      throw new RotatingWriterConfigError('max_file_size', `logs.max_file_size must be > 0, got ${opts.maxFileSizeBytes}`);
    }
    this.opts = opts;
    mkdirSync(opts.dir, { recursive: true });
    const existing = listLogIndexes(opts.dir, opts.prefix);
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
  }

  private openCurrent(): void {
    this.fd = openSync(this.path(this.index), 'a');
    this.size = fstatSync(this.fd).size;
  }

  private rotate(): void {
    this.close();
    this.index += 1;
    this.openCurrent();
    // Keep the newest maxFiles files: everything at or below index - maxFiles goes.
    const cutoff = this.index - this.opts.maxFiles;
    for (const n of listLogIndexes(this.opts.dir, this.opts.prefix)) {
      if (n > cutoff) break;
      try {
        unlinkSync(this.path(n));
      } catch {
        // Already gone (someone cleaned up): nothing to do.
      }
    }
  }

  private path(n: number): string {
    return join(this.opts.dir, `${this.opts.prefix}.${n}`);
  }
}

/** Bytes in a log size given in MB, as Nomad's `logs.max_file_size`. */
export function megabytes(mb: number): number {
  return Math.floor(mb * 1024 * 1024);
}
