/**
 * The FIFOs of the resident exec shell (resident-shell.ts): one set of three (stdin, stdout,
 * stderr) per exec, in a directory the driver makes in the task's secrets dir (mounted at
 * /secrets in this container only; other tasks of the alloc cannot see it).
 *
 * Node has no mkfifo, so sets are made ahead of time in batches by one run of the `mkfifo`
 * tool (off the exec's path) and kept in a small pool. The directory is writable by the
 * container, so nothing in it is trusted: the directory is held open (no symlink followed on
 * the way), mkfifo is pointed at it through that descriptor, each FIFO's device and inode are
 * recorded when made, and every open is O_NOFOLLOW | O_NONBLOCK followed by an fstat that must
 * show a FIFO owned by root with the recorded device and inode. A symlink, device node or
 * regular file the container plants in its place is refused, so the agent never reads or
 * writes anything else.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants as C, fchmodSync, fstatSync, lstatSync, openSync } from 'node:fs';
import { openDirNoFollowSync, pathAt, unlinkAtSync } from '../../fs/confined-fs.js';

/** The directory below the secrets dir; /secrets/.caravan-exec in the container. */
export const EXEC_FIFO_DIR = '.caravan-exec';

/** How many sets one mkfifo run makes, and the level below which the pool is refilled. */
const BATCH = 8;
const LOW = 3;

/** The three FIFOs of one exec: `<base>.i`, `<base>.o`, `<base>.e`. */
export interface FifoSet {
  base: string;
  ids: Record<'i' | 'o' | 'e', { dev: number; ino: number }>;
}

/** Raised when a FIFO is not the one the agent made. */
export class FifoRefused extends Error {}

/** The FIFO directory of one container and its pool of ready sets. */
export class FifoPool {
  private readonly dirFd: number;
  private readonly ready: FifoSet[] = [];
  private filling = false;
  private closed = false;

  /** Opens (making it if needed) the directory below `secretsDir`; throws if it cannot be had safely. */
  constructor(secretsDir: string) {
    this.dirFd = openDirNoFollowSync(secretsDir, EXEC_FIFO_DIR, { create: true, mode: 0o711 });
    // Only root (the agent) makes entries; the container's user only opens them by name.
    fchmodSync(this.dirFd, 0o711);
  }

  /** A ready set, or null when the pool is empty (it is refilled in the background either way). */
  take(): FifoSet | null {
    const s = this.ready.shift() ?? null;
    if (this.ready.length < LOW) void this.fill();
    return s;
  }

  /** Makes a batch of sets; resolves when they are in the pool (or making them failed). */
  async fill(): Promise<void> {
    if (this.filling || this.closed) return;
    this.filling = true;
    try {
      const bases = Array.from({ length: BATCH }, () => randomBytes(12).toString('hex'));
      const names = bases.flatMap((b) => [`${b}.i`, `${b}.o`, `${b}.e`]);
      // Through the agent's descriptor of the directory: a directory the container swapped for
      // a symlink meanwhile is not followed.
      const dir = `/proc/${process.pid}/fd/${this.dirFd}`;
      await new Promise<void>((resolve, reject) =>
        execFile('mkfifo', ['-m', '666', ...names.map((n) => `${dir}/${n}`)], { timeout: 10_000 }, (err) => (err ? reject(err) : resolve())),
      );
      if (this.closed) return;
      for (const base of bases) {
        const ids = {} as FifoSet['ids'];
        let ok = true;
        for (const k of ['i', 'o', 'e'] as const) {
          const st = lstatSync(pathAt(this.dirFd, `${base}.${k}`), { throwIfNoEntry: false });
          if (!st?.isFIFO() || st.uid !== 0) ok = false;
          else ids[k] = { dev: st.dev, ino: st.ino };
        }
        if (ok) this.ready.push({ base, ids });
        else this.remove({ base });
      }
    } catch {
      // No mkfifo, or the directory is gone: execs use the Engine's exec.
    } finally {
      this.filling = false;
    }
  }

  /**
   * Opens FIFO `k` of `set`: O_NOFOLLOW | O_NONBLOCK, then checked to be the FIFO the agent made
   * (throws FifoRefused otherwise). stdin is opened read-write, so the open never waits for the
   * command and bytes written before it opens its end stay in the pipe for it.
   */
  open(set: FifoSet, k: 'i' | 'o' | 'e'): number {
    const flags = (k === 'i' ? C.O_RDWR : C.O_RDONLY) | C.O_NOFOLLOW | C.O_NONBLOCK;
    let fd: number;
    try {
      fd = openSync(pathAt(this.dirFd, `${set.base}.${k}`), flags);
    } catch (err) {
      throw new FifoRefused(`exec fifo ${set.base}.${k}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const st = fstatSync(fd);
    const want = set.ids[k];
    if (!st.isFIFO() || st.uid !== 0 || st.dev !== want.dev || st.ino !== want.ino) {
      closeSync(fd);
      throw new FifoRefused(`exec fifo ${set.base}.${k} is not the FIFO the agent made; refused`);
    }
    return fd;
  }

  /** Removes a set's names (whatever is there now; unlink never follows a link). */
  remove(set: Pick<FifoSet, 'base'>): void {
    if (this.closed) return;
    for (const k of ['i', 'o', 'e']) {
      try {
        unlinkAtSync(this.dirFd, `${set.base}.${k}`);
      } catch {
        /* the container removed or replaced it: nothing of ours is left */
      }
    }
  }

  /** Removes the ready sets and lets go of the directory. */
  close(): void {
    if (this.closed) return;
    for (const s of this.ready.splice(0)) this.remove(s);
    this.closed = true;
    closeSync(this.dirFd);
  }
}
