/**
 * Durable exit records: one JSON file per task under `<dataDir>/supervisor/exits/`, written
 * with write-to-temp, fsync, rename, fsync-dir, so an exit observed by the supervisor is
 * never lost even if the supervisor and the agent both die right after.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { escapeTaskId, type SupervisedExit } from './protocol.js';

/** A recorded exit, with the identity of the process it belongs to. */
export interface ExitRecord extends SupervisedExit {
  taskId: string;
  pid: number;
  startTime: number;
  startedAt: number;
}

/** Reads and writes exit records in one directory. */
export class ExitStore {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** Persists a record durably before returning. */
  write(rec: ExitRecord): void {
    const final = this.path(rec.taskId);
    const tmp = `${final}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, JSON.stringify(rec));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, final);
    const dfd = openSync(this.dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  }

  /** The record of taskId, or null if none (or unreadable). */
  read(taskId: string): ExitRecord | null {
    try {
      const v = JSON.parse(readFileSync(this.path(taskId), 'utf8')) as ExitRecord;
      return typeof v.exitCode === 'number' ? v : null;
    } catch {
      return null;
    }
  }

  /** Deletes the record of taskId; missing is fine. */
  remove(taskId: string): void {
    try {
      unlinkSync(this.path(taskId));
    } catch {
      // Nothing recorded.
    }
  }

  private path(taskId: string): string {
    return join(this.dir, `${escapeTaskId(taskId)}.json`);
  }
}
