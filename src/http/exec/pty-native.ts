/**
 * Opens pseudo-terminal pairs with the native binding @lydell/node-pty ships (its `open` and
 * `resize`). node-pty's master descriptors are not close-on-exec, so every process forked while a
 * terminal session is open inherits them — a command in another session, even one entered into
 * an `exec` sandbox, could type into that terminal. Commands are therefore spawned by Node, with
 * held-fds.ts keeping those descriptors out of every child; node-pty's own fork (`forkPty`) is
 * used only while no such descriptor is held, when there is nothing to leak.
 */
import { createRequire } from 'node:module';
import type { TerminalSize } from './exec-frames.js';

interface PtyBinding {
  open(cols: number, rows: number): { master: number; slave: number; pty: string };
  resize(fd: number, cols: number, rows: number): void;
  fork(file: string, args: string[], env: string[], cwd: string, cols: number, rows: number, uid: number, gid: number, utf8: boolean, helperPath: string, onExit: (code: number, signal: number) => void): { fd: number; pid: number; pty: string };
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

/** A command forked onto a new terminal by node-pty's native fork. */
export interface ForkedPty {
  master: number;
  pid: number;
}

/**
 * Forks `file` onto a new terminal with node-pty's native fork (forkpty: the child is a session
 * leader with the terminal as its controlling terminal, signal dispositions reset, then execvp).
 * The child inherits every descriptor of this process that is not close-on-exec; callers use it
 * only when no terminal descriptor is held (held-fds.ts). `onExit` gets the exit code, or the
 * signal number (code 0) when a signal ended it.
 */
export function forkPty(file: string, args: string[], spec: { cwd: string; env: Record<string, string> }, size: TerminalSize, onExit: (code: number, signal: number) => void): ForkedPty {
  const env = Object.entries(spec.env).map(([k, v]) => `${k}=${v}`);
  const t = native().fork(file, args, env, spec.cwd, Math.max(1, size.width), Math.max(1, size.height), -1, -1, true, '', onExit);
  return { master: t.fd, pid: t.pid };
}
