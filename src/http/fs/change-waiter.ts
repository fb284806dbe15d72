/**
 * Waits for "something may have changed" in a directory: an fs.watch event wakes the waiter at
 * once, and a poll interval bounds the wait when watching is unavailable or misses an event
 * (rotation by rename, network file systems).
 */
import { watch, type FSWatcher } from 'node:fs';

/** A reusable waiter over one directory. Call close() when the stream ends. */
export class ChangeWaiter {
  private watcher: FSWatcher | undefined;
  private wake: (() => void) | undefined;
  private dirty = false;

  constructor(
    dir: string,
    private readonly pollMs: number,
  ) {
    this.tryWatch(dir);
  }

  private tryWatch(dir: string): void {
    try {
      this.watcher = watch(dir, { persistent: false }, () => {
        this.dirty = true;
        this.wake?.();
      });
      this.watcher.on('error', () => this.closeWatcher());
    } catch {
      this.watcher = undefined; // the directory does not exist yet: polling only
    }
  }

  private closeWatcher(): void {
    this.watcher?.close();
    this.watcher = undefined;
  }

  /** Resolves on the next change, after pollMs, or when `signal` aborts (never rejects). */
  wait(signal: AbortSignal): Promise<void> {
    if (this.dirty || signal.aborted) {
      this.dirty = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        this.dirty = false;
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      signal.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
  }

  close(): void {
    this.closeWatcher();
    this.wake?.();
  }
}
