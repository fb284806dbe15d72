/**
 * The rotated log files of one task and stream type in `<allocdir>/alloc/logs`:
 * `<task>.stdout.0`, `<task>.stdout.1`, … — read in index order, the highest being written.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfinementCode, ConfinementError } from '../../fs/confined-fs.js';

/** Which of a task's streams to read. */
export const LogType = { Stdout: 'stdout', Stderr: 'stderr' } as const;
export type LogType = (typeof LogType)[keyof typeof LogType];

/** One rotated log file. */
export interface LogFile {
  index: number;
  name: string;
  size: number;
}

/** The directory of logs inside an allocation directory, and how the API names it. */
export const LOG_DIR_RELATIVE = 'alloc/logs';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The log files of `task`/`type` in `logDir`, by ascending index; [] if there are none. The
 * directory is the task's: an entry under a log file's name that is not a regular file (a
 * symlink planted to make the agent read a host file) is refused with a ConfinementError.
 */
export async function listLogFiles(logDir: string, task: string, type: LogType): Promise<LogFile[]> {
  let names: string[];
  try {
    names = await readdir(logDir);
  } catch {
    return [];
  }
  const re = new RegExp(`^${escapeRegExp(task)}\\.${type}\\.(\\d+)$`);
  const out: LogFile[] = [];
  for (const name of names) {
    const m = re.exec(name);
    if (!m) continue;
    try {
      const st = await lstat(join(logDir, name));
      if (!st.isFile()) throw new ConfinementError(ConfinementCode.NotRegular, `log file ${name} is not a regular file; refused`);
      out.push({ index: Number(m[1]), name, size: st.size });
    } catch (err) {
      if (err instanceof ConfinementError) throw err;
      // rotated away between readdir and stat
    }
  }
  return out.sort((a, b) => a.index - b.index);
}

/** Where reading starts: a file index and a byte position in it. */
export interface LogPosition {
  index: number;
  pos: number;
}

/**
 * Finds the position `offset` bytes from the start (origin "start") or from the end (origin
 * "end") of the concatenation of `files`. Offsets past either end are clamped.
 */
export function locateOffset(files: LogFile[], offset: number, origin: 'start' | 'end'): LogPosition {
  if (files.length === 0) return { index: 0, pos: 0 };
  if (origin === 'start') {
    let skip = offset;
    for (let i = 0; i < files.length; i++) {
      const f = files[i]!;
      if (skip < f.size || i === files.length - 1) return { index: f.index, pos: Math.min(skip, f.size) };
      skip -= f.size;
    }
  }
  let back = offset;
  for (let i = files.length - 1; i >= 0; i--) {
    const f = files[i]!;
    if (back <= f.size) return { index: f.index, pos: f.size - back };
    back -= f.size;
  }
  return { index: files[0]!.index, pos: 0 };
}
