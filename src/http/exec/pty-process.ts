/**
 * A command started for an exec session on a new pseudo-terminal (stdout and stderr are one
 * stream). The terminal comes from pty-native.ts. While this process holds no terminal
 * descriptor, node-pty's fork starts the command directly; otherwise Node spawns it through a
 * small sh step that makes the terminal its controlling terminal (a session leader opening the
 * device acquires it), with the held descriptors kept out of it (see pty-native.ts). Either way
 * job control and ^C work.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { EventEmitter } from 'node:events';
import { closeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import tty from 'node:tty';
import { RELAY_READY_FD, type ExecSpec } from '../../drivers/driver.js';
import type { TerminalSize } from './exec-frames.js';
import { signalExitCode, type ExecProcess, type ExecProcessEvents } from './exec-process.js';
import { hold, holdsAny, release, stdioWithout } from './held-fds.js';
import { forkPty, openPty, resizePty } from './pty-native.js';
import { pwdLine, resolvable } from './shell-words.js';

export const DEFAULT_TERMINAL_SIZE: TerminalSize = { width: 80, height: 24 };

/** How long output is still read after the command exited, while its children hold the terminal. */
const DRAIN_AFTER_EXIT_MS = 200;

/** Reopens the terminal ($1) as stdin/stdout/stderr, which makes it the controlling terminal. */
const TAKE_TERMINAL = 'exec 0<>"$1" 1>&0 2>&0';

/** The environment of a terminal session: TERM as node-pty sets it when the task has none. */
export function terminalEnv(env: Record<string, string>): Record<string, string> {
  return env.TERM === undefined ? { ...env, TERM: 'xterm-256color' } : env;
}

/** The command a terminal session of `spec` runs (ExecSpec.relayedTerminal), with TERM set. */
export function terminalCommand(spec: ExecSpec): ExecSpec {
  const { relayedTerminal, ...plain } = spec;
  const run = relayedTerminal ? { ...plain, ...relayedTerminal } : plain;
  return { ...run, env: terminalEnv(run.env) };
}

/** What a terminal session needs of its command's process: its end, and a way to signal it. */
export interface TerminalChild {
  on(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  kill(signal?: NodeJS.Signals): boolean;
}

/** A shell started as session leader on a new terminal; the master end stays with the caller. */
export interface TerminalShell {
  child: TerminalChild;
  master: number;
}

/**
 * A command forked onto a new terminal by node-pty's fork: one execve, no sh step (measured back
 * to back, a cold terminal session now costs ~0.2 ms more than a pipe one instead of ~0.9 ms).
 * node-pty waits for the exit on a thread of libuv's pool; since the master is held while the
 * session runs, the next terminal session takes the sh step, so at most one such thread waits.
 */
class ForkedTerminalChild extends EventEmitter implements TerminalChild {
  readonly master: number;
  private readonly pid: number;
  private exited = false;

  constructor(file: string, args: string[], spec: Pick<ExecSpec, 'cwd' | 'env'>, size: TerminalSize) {
    super();
    // node-pty reports the exit through the event loop, so never before this constructor ends.
    const t = forkPty(file, args, spec, size, (code, signal) => this.exit(code, signal));
    hold(t.master);
    this.master = t.master;
    this.pid = t.pid;
  }

  private exit(code: number, signal: number): void {
    this.exited = true;
    const name = signal > 0 ? (Object.entries(osConstants.signals).find(([, n]) => n === signal)?.[0] as NodeJS.Signals | undefined) : undefined;
    this.emit('exit', signal > 0 ? null : code, name ?? null);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    // After the exit the pid may already name another process.
    if (this.exited) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}

/**
 * Opens a terminal of `size` and starts `/bin/sh -c script sh <terminal path> …args` on it in a
 * new session. With `control`, the shell also gets a pipe as fd 3. The slave end is closed here
 * once the shell has it, so the master reads EIO when the last process on the terminal is gone.
 */
export function spawnOnTerminal(script: string, args: string[], spec: Pick<ExecSpec, 'cwd' | 'env'>, size: TerminalSize, control: boolean): TerminalShell & { child: ChildProcess } {
  const pair = openPty(size);
  hold(pair.master);
  hold(pair.slave);
  try {
    const stdio = stdioWithout(control ? [pair.slave, pair.slave, pair.slave, 'pipe'] : [pair.slave, pair.slave, pair.slave]);
    const child = spawn('/bin/sh', ['-c', script, 'sh', pair.path, ...args], { cwd: spec.cwd, env: spec.env, stdio, detached: true });
    return { child, master: pair.master };
  } catch (err) {
    closeHeld(pair.master);
    throw err;
  } finally {
    closeHeld(pair.slave);
  }
}

/** Closes a held descriptor that no stream owns. */
export function closeHeld(fd: number): void {
  closeSync(fd);
  release(fd);
}

/**
 * Starts `spec` on a new terminal of `size` (its relayed command when it has one, see
 * terminalCommand); a command that cannot be found exits 127.
 */
export function startPtyProcess(session: ExecSpec, size: TerminalSize | undefined, events: ExecProcessEvents): ExecProcess {
  const spec = terminalCommand(session);
  const env = spec.env;
  const relayed = session.relayedTerminal !== undefined;
  let shell: TerminalShell | undefined;
  let ready: Readable | undefined;
  let failure = `${spec.file}: no such executable`;
  if (resolvable(spec.file, env)) {
    try {
      if (relayed) {
        // A relay says on fd 3 when its terminal is up (RELAY_READY_FD): Node's spawn gives it one.
        const t = spawnOnTerminal(`${TAKE_TERMINAL}; shift; ${pwdLine(env)}; exec "$@"`, [spec.file, ...spec.args], { cwd: spec.cwd, env }, size ?? DEFAULT_TERMINAL_SIZE, true);
        ready = t.child.stdio[RELAY_READY_FD] as Readable;
        shell = t;
      } else if (holdsAny()) {
        shell = spawnOnTerminal(`${TAKE_TERMINAL}; shift; ${pwdLine(env)}; exec "$@"`, [spec.file, ...spec.args], { cwd: spec.cwd, env }, size ?? DEFAULT_TERMINAL_SIZE, false);
      } else {
        const child = new ForkedTerminalChild(spec.file, spec.args, { cwd: spec.cwd, env }, size ?? DEFAULT_TERMINAL_SIZE);
        shell = { child, master: child.master };
      }
    } catch (err) {
      failure = (err as Error).message;
    }
  }
  if (!shell) {
    queueMicrotask(() => {
      events.onOutput('stdout', Buffer.from(`failed to exec ${failure}\r\n`));
      events.onExit(127);
    });
    return { write() {}, closeStdin() {}, resize() {}, kill() {} };
  }
  return attachPtyProcess(shell, spec, events, ready);
}

/**
 * Binds a command running on a terminal (started cold or from a warm shell) to `events`. The
 * exit is reported once the command has exited and its output is read to the end (the master
 * reads EIO), or DRAIN_AFTER_EXIT_MS after the exit if something it started keeps the terminal.
 * With `ready` (a relay's RELAY_READY_FD), input is held until it says so or closes.
 */
export function attachPtyProcess(shell: TerminalShell, spec: ExecSpec, events: ExecProcessEvents, ready?: Readable): ExecProcess {
  const { child, master } = shell;
  const term = new tty.ReadStream(master);
  let held: Array<string | Buffer> | undefined;
  if (ready) {
    held = [];
    const release = (): void => {
      if (!held) return;
      for (const d of held) term.write(d);
      held = undefined;
      // Read once: whatever else comes on it (the task can reach the relay's copy) is refused.
      ready.destroy();
    };
    ready.once('data', release);
    ready.once('end', release);
    ready.once('close', release);
    ready.on('error', release);
  }
  const input = (d: string | Buffer): void => {
    if (held) held.push(d);
    else term.write(d);
  };
  term.on('close', () => release(master));
  let exitCode: number | undefined;
  let drained = false;
  let reported = false;
  let drainTimer: NodeJS.Timeout | undefined;
  const finish = (): void => {
    if (reported || exitCode === undefined || !drained) return;
    reported = true;
    clearTimeout(drainTimer);
    term.destroy();
    events.onExit(exitCode);
  };
  const endOfOutput = (): void => {
    drained = true;
    finish();
  };
  term.on('data', (d: Buffer) => events.onOutput('stdout', d));
  term.on('end', endOfOutput);
  term.on('close', endOfOutput);
  term.on('error', (err: NodeJS.ErrnoException) => {
    // EAGAIN is a spurious wake-up; EIO means every process left the terminal.
    if (err.code !== 'EAGAIN') endOfOutput();
  });
  child.on('error', (err) => {
    if (exitCode !== undefined) return;
    events.onOutput('stdout', Buffer.from(`failed to exec ${spec.file}: ${err.message}\r\n`));
    exitCode = 127;
    endOfOutput();
  });
  child.on('exit', (code, sig) => {
    exitCode = code ?? signalExitCode(sig);
    if (!drained) drainTimer = setTimeout(endOfOutput, DRAIN_AFTER_EXIT_MS).unref();
    finish();
  });
  const live = (): boolean => !reported && exitCode === undefined;
  return {
    write(data) {
      if (live()) input(data);
    },
    closeStdin() {
      // A terminal has no separate stdin to close: send EOF (^D) as a terminal user would.
      if (live()) input('\x04');
    },
    resize(sz) {
      if (live() && sz.width > 0 && sz.height > 0) resizePty(master, sz);
    },
    kill() {
      if (exitCode === undefined) child.kill(spec.killSignal ?? 'SIGKILL');
    },
  };
}
