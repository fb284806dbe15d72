/**
 * Opens pseudo-terminal pairs with the native binding @lydell/node-pty ships (its `open` and
 * `resize`), without node-pty's own fork: node-pty's master descriptors are not close-on-exec,
 * so every process forked while a terminal session is open inherits them — a command in another
 * session, even one entered into an `exec` sandbox, could type into that terminal. Here the
 * spawning is ours, and held-fds.ts keeps those descriptors out of every child.
 */
import { createRequire } from 'node:module';
import type { TerminalSize } from './exec-frames.js';

interface PtyBinding {
  open(cols: number, rows: number): { master: number; slave: number; pty: string };
  resize(fd: number, cols: number, rows: number): void;
}

let binding: PtyBinding | undefined;

/**
 * The binding of the platform package node-pty loads (e.g. @lydell/node-pty-linux-x64),
 * resolved from node-pty's own location, wherever npm placed it.
 */
function native(): PtyBinding {
  const fromPty = createRequire(createRequire(import.meta.url).resolve('@lydell/node-pty'));
  binding ??= fromPty(`@lydell/node-pty-${process.platform}-${process.arch}/pty.node`) as PtyBinding;
  return binding;
}

/** One new terminal: both ends open in this process, neither close-on-exec. */
export interface PtyPair {
  master: number;
  slave: number;
  /** The slave's device path, e.g. /dev/pts/3. */
  path: string;
}

export function openPty(size: TerminalSize): PtyPair {
  const t = native().open(Math.max(1, size.width), Math.max(1, size.height));
  return { master: t.master, slave: t.slave, path: t.pty };
}

export function resizePty(master: number, size: TerminalSize): void {
  native().resize(master, Math.max(1, size.width), Math.max(1, size.height));
}
