/**
 * Reading a log (across its rotated files) or a single file as a sequence of chunks, optionally
 * following it: at end of file the reader waits for more data, moves on to the next rotated
 * file when one appears, restarts a truncated file, and stops at a deleted one.
 */
import { join } from 'node:path';
import { ChangeWaiter } from './change-waiter.js';
import { LOG_DIR_RELATIVE, type LogPosition, type LogType, listLogFiles } from './log-files.js';
import { readChunk, sizeOf } from './read-chunk.js';
import { FileEvent, STREAM_FRAME_SIZE, type StreamChunk } from './stream-frame.js';

/** How often a follower re-checks its files when no change notification arrives. */
export const FOLLOW_POLL_MS = 250;

/** Options common to both followers. */
export interface FollowOptions {
  follow: boolean;
  signal: AbortSignal;
  pollMs?: number;
  /** Stop after this many bytes (readat/limit); undefined for no limit. */
  limit?: number;
}

/** Streams the logs of `task`/`type` in `allocDir` from `start`. Ends when not following and at the end of the last file. */
export async function* followLogs(
  allocDir: string,
  task: string,
  type: LogType,
  start: LogPosition,
  opts: FollowOptions & { realRoot: string },
): AsyncGenerator<StreamChunk> {
  const logDir = join(allocDir, LOG_DIR_RELATIVE);
  const waiter = new ChangeWaiter(logDir, opts.pollMs ?? FOLLOW_POLL_MS);
  let index = start.index;
  let pos = start.pos;
  let started = false;
  try {
    while (!opts.signal.aborted) {
      const files = await listLogFiles(logDir, task, type);
      if (!started) {
        // Until a file at or past the starting index exists (follow on a task not yet started), wait.
        const first = files.find((f) => f.index >= index);
        if (first) {
          if (first.index !== index) pos = 0;
          index = first.index;
          started = true;
        }
      }
      if (started) {
        const name = `${task}.${type}.${index}`;
        const path = join(logDir, name);
        const rel = `${LOG_DIR_RELATIVE}/${name}`;
        const data = await readChunk(path, rel, pos, STREAM_FRAME_SIZE, opts.realRoot);
        if (data && data.length > 0) {
          pos += data.length;
          yield { file: rel, offset: pos, data };
          continue;
        }
        const next = files.find((f) => f.index > index);
        if (next) {
          // Read once more before switching: the writer may have appended just before rotating.
          const tail = data === undefined ? undefined : await readChunk(path, rel, pos, STREAM_FRAME_SIZE, opts.realRoot);
          if (tail && tail.length > 0) {
            pos += tail.length;
            yield { file: rel, offset: pos, data: tail };
            continue;
          }
          index = next.index;
          pos = 0;
          continue;
        }
        const size = data === undefined ? undefined : await sizeOf(path);
        if (size !== undefined && size < pos) {
          pos = 0;
          yield { file: rel, offset: 0, data: Buffer.alloc(0), event: FileEvent.Truncated };
          continue;
        }
      }
      if (!opts.follow) return;
      await waiter.wait(opts.signal);
    }
  } finally {
    waiter.close();
  }
}

/** Streams the single file at `absolute` (named `relative` in frames) from byte `pos`. */
export async function* followFile(
  absolute: string,
  relative: string,
  pos: number,
  opts: FollowOptions & { realRoot: string },
): AsyncGenerator<StreamChunk> {
  const dir = absolute.slice(0, Math.max(1, absolute.lastIndexOf('/')));
  const waiter = opts.follow ? new ChangeWaiter(dir, opts.pollMs ?? FOLLOW_POLL_MS) : undefined;
  let remaining = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity;
  let event: FileEvent | undefined;
  try {
    while (!opts.signal.aborted && remaining > 0) {
      const data = await readChunk(absolute, relative, pos, Math.min(STREAM_FRAME_SIZE, remaining), opts.realRoot);
      if (data === undefined) {
        yield { file: relative, offset: pos, data: Buffer.alloc(0), event: FileEvent.Deleted };
        return;
      }
      if (data.length > 0 || event) {
        pos += data.length;
        remaining -= data.length;
        yield { file: relative, offset: pos, data, ...(event ? { event } : {}) };
        event = undefined;
        if (data.length > 0) continue;
      }
      if (!waiter) return;
      const size = await sizeOf(absolute);
      if (size !== undefined && size < pos) {
        pos = 0;
        event = FileEvent.Truncated;
        continue;
      }
      await waiter.wait(opts.signal);
    }
  } finally {
    waiter?.close();
  }
}
