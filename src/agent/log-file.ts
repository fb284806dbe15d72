/**
 * The agent's log file (`log_file`), rotated as Nomad's: lines go to the active file, which
 * always has the configured name; when it has grown to `log_rotate_bytes` (0: no limit) or is
 * `log_rotate_duration` old (default 24h), it is renamed `<name>-<unix nanos><ext>` and a new
 * active file is opened; then the oldest archives past `log_rotate_max_files` are deleted (0:
 * keep all, negative: keep none). Writes are synchronous so nothing is lost at exit; the clock
 * is injected so rotation by age is tested without waiting.
 */
import { closeSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { CaravanError } from '../structs/caravan-error.js';

/** The file name Nomad's agent uses when `log_file` names only a directory ("nomad.log" there). */
export const DEFAULT_LOG_FILE_NAME = 'caravan.log';

/** Nomad's default `log_rotate_duration`. */
export const DEFAULT_LOG_ROTATE_DURATION_MS = 24 * 60 * 60 * 1000;

/** The `log_file` settings. */
export interface LogFileOptions {
  /** `log_file`: a file path, or a directory path ending in "/" (the file is then caravan.log). */
  path: string;
  /** `log_rotate_bytes`: rotate once the active file holds this many bytes; 0 for no limit. */
  rotateBytes: number;
  /** `log_rotate_duration` in ms: rotate once the active file is this old. */
  rotateDurationMs: number;
  /** `log_rotate_max_files`: archives kept; 0 keeps all, a negative number none. */
  rotateMaxFiles: number;
  /** Wall-clock ms (tests pass a fake). */
  now?: () => number;
}

/** The log file cannot be opened or written. */
export class LogFileError extends CaravanError<'AGENT_CONFIG_INVALID'> {
  constructor(path: string, reason: string, cause?: unknown) {
    super('AGENT_CONFIG_INVALID', { field: 'log_file', reason: `cannot open ${path}: ${reason}` }, cause === undefined ? undefined : { cause });
    this.name = 'LogFileError';
  }
}

/** The active file's path for a `log_file` setting. */
export function activeLogPath(setting: string): string {
  return setting.endsWith('/') ? join(setting, DEFAULT_LOG_FILE_NAME) : setting;
}

/** A rotating log file. Not safe to share between processes. */
export class LogFile {
  /** The active file's path. */
  readonly path: string;
  private fd: number;
  private bytes: number;
  private openedAt: number;
  /** The last archive's stamp: stamps only grow, so two rotations in one ms never collide. */
  private lastStamp = 0n;
  private readonly now: () => number;

  /** Opens (appending) the active file; throws LogFileError naming it when that fails. */
  constructor(private readonly opts: LogFileOptions) {
    this.path = activeLogPath(opts.path);
    this.now = opts.now ?? Date.now;
    this.fd = this.open();
    this.bytes = this.sizeOfActive();
    this.openedAt = this.now();
  }

  private open(): number {
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      return openSync(this.path, 'a', 0o640);
    } catch (err) {
      throw new LogFileError(this.path, (err as Error).message, err);
    }
  }

  private sizeOfActive(): number {
    try {
      return statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  /** Appends `text`, rotating first when the active file is due. Errors are swallowed: logging never stops the agent. */
  write(text: string): void {
    try {
      this.rotateIfDue();
      this.bytes += writeSync(this.fd, text);
    } catch {
      // A full disk or a removed directory: the line is lost, the agent goes on.
    }
  }

  private rotateIfDue(): void {
    const bySize = this.opts.rotateBytes > 0 && this.bytes >= this.opts.rotateBytes;
    const byAge = this.now() - this.openedAt >= this.opts.rotateDurationMs;
    if (!bySize && !byAge) return;
    closeSync(this.fd);
    const ext = extname(this.path) || '.log';
    const stem = basename(this.path, extname(this.path));
    const stamp = BigInt(this.now()) * 1_000_000n;
    this.lastStamp = stamp > this.lastStamp ? stamp : this.lastStamp + 1n;
    const archive = join(dirname(this.path), `${stem}-${this.lastStamp}${ext}`);
    renameSync(this.path, archive);
    this.fd = this.open();
    this.bytes = 0;
    this.openedAt = this.now();
    this.prune(stem, ext);
  }

  /** Deletes the oldest archives past rotateMaxFiles (their names sort by time). */
  private prune(stem: string, ext: string): void {
    const max = this.opts.rotateMaxFiles;
    if (max === 0) return;
    const dir = dirname(this.path);
    const archive = new RegExp(`^${escapeRegExp(stem)}-\\d+${escapeRegExp(ext)}$`);
    const archives = readdirSync(dir).filter((f) => archive.test(f)).sort(byNumberInName);
    const stale = max < 0 ? archives : archives.slice(0, Math.max(0, archives.length - max));
    for (const f of stale) rmSync(join(dir, f), { force: true });
  }

  /** Closes the active file. */
  close(): void {
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Archive names differ only in their nanosecond stamp: compare those as numbers. */
function byNumberInName(a: string, b: string): number {
  const n = (s: string) => BigInt(/-(\d+)[^-]*$/.exec(s)?.[1] ?? '0');
  const d = n(a) - n(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
