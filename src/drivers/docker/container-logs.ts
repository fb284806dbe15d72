/**
 * Copies a container's stdout and stderr into the task's rotated log files
 * (`<task>.stdout.N`, `<task>.stderr.N`), so `alloc logs` and the logs API read them as for any
 * driver. The engine keeps the container's output (json-file log driver); the agent follows it.
 * After an agent restart the copy resumes from the last write to the task's log files, so output
 * produced while the agent was down is not lost.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import type { TaskLogConfig } from '../driver.js';
import { listLogIndexes, megabytes, RotatingFileWriter } from '../logs/rotating-file-writer.js';
import type { EngineClient } from './engine-client.js';
import { StreamDemuxer } from './stream-demux.js';

/**
 * The engine `since` value (seconds.nanoseconds) just after the newest write to the task's
 * current log files, or 0 when nothing was written yet (copy everything).
 */
export function resumePoint(logs: TaskLogConfig, taskName: string): string {
  let newest = 0n;
  for (const stream of ['stdout', 'stderr']) {
    const prefix = `${taskName}.${stream}`;
    const idx = listLogIndexes(logs.dir, prefix);
    if (idx.length === 0) continue;
    try {
      // lstat: the container can write into the log dir (it is under /alloc); follow no link it planted.
      const st = lstatSync(join(logs.dir, `${prefix}.${idx[idx.length - 1]}`), { bigint: true });
      if (st.isFile() && st.size > 0n && st.mtimeNs > newest) newest = st.mtimeNs;
    } catch {
      // rotated away meanwhile, or the dir is not readable as such
    }
  }
  if (newest === 0n) return '0';
  const next = newest + 1n;
  return `${next / 1_000_000_000n}.${String(next % 1_000_000_000n).padStart(9, '0')}`;
}

/** One container's log copy; `done` resolves when the engine ends the stream (the container stopped). */
export class ContainerLogCopy {
  readonly done: Promise<void>;
  private res: IncomingMessage | null = null;
  private stopped = false;
  private readonly stdout: RotatingFileWriter;
  private readonly stderr: RotatingFileWriter;

  constructor(engine: EngineClient, containerId: string, logs: TaskLogConfig, taskName: string, since: string) {
    const opts = { dir: logs.dir, maxFiles: logs.maxFiles, maxFileSizeBytes: megabytes(logs.maxFileSizeMB) };
    this.stdout = new RotatingFileWriter({ ...opts, prefix: `${taskName}.stdout` });
    this.stderr = new RotatingFileWriter({ ...opts, prefix: `${taskName}.stderr` });
    const demux = new StreamDemuxer((stream, payload) => (stream === 'stderr' ? this.stderr : this.stdout).write(payload));
    this.done = (async () => {
      try {
        const res = await engine.stream({
          method: 'GET',
          path: `/containers/${containerId}/logs`,
          query: { follow: 1, stdout: 1, stderr: 1, since },
        });
        this.res = res;
        if (this.stopped) res.destroy();
        await new Promise<void>((resolve) => {
          res.on('data', (c: Buffer) => demux.push(c));
          res.on('end', resolve);
          res.on('error', () => resolve());
          res.on('close', resolve);
        });
      } catch {
        // The container is gone or the engine went away: nothing more to copy.
      } finally {
        this.closeFiles();
      }
    })();
  }

  /** Stops copying (agent shutdown or task destroyed). */
  stop(): void {
    this.stopped = true;
    this.res?.destroy();
  }

  private closeFiles(): void {
    this.stdout.close();
    this.stderr.close();
  }
}
