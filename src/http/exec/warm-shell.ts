/**
 * A warm shell: `/bin/sh` started ahead of an exec session, with the session's environment,
 * working directory and stdio (pipes, or a terminal it leads) already in place, blocked reading
 * one command line from a control pipe (fd 3). Starting a session on it costs one execve instead
 * of fork + execve: the fork (~1 ms from the spawner, more under load) was paid while the
 * spawner was idle. Measured on this project's machine, `echo hi` sessions 10 ms apart: 1.8 ms
 * from start to exit when spawned, 1.3 ms on a warm shell.
 *
 * The shell execs the command in place (same pid), so the ChildProcess Node holds is the
 * command's: its exit code, 'close' and kill behave exactly as for a direct spawn.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import type { ExecSpec } from '../../drivers/driver.js';
import type { CommandIo, CommandPipes } from './command-pipes.js';
import { stdioWithout } from './held-fds.js';
import { socketsOf } from './exec-process.js';
import { closeHeld, DEFAULT_TERMINAL_SIZE, spawnOnTerminal } from './pty-process.js';
import { pwdLine, resolvable, shellQuote } from './shell-words.js';

/**
 * Reads one line from fd 3, closes it (the command must not inherit the control pipe), and
 * evaluates the line, which is always `unset PWD|export PWD=…; exec 'file' 'arg' …`. EOF on fd 3
 * (the spawner went away) ends the shell. On a terminal, the shell first takes the terminal
 * ($1) as its controlling terminal.
 */
const TRAMPOLINE = 'IFS= read -r line <&3 || exit 127; exec 3<&-; eval "$line"';
const TERMINAL_TRAMPOLINE = 'IFS= read -r line <&3 || exit 127; exec 3<&- 0<>"$1" 1>&0 2>&0; eval "$line"';

/** dash reads its line a byte per syscall: longer command lines take the cold path. */
const MAX_LINE = 4096;

/**
 * The line a warm shell evaluates for `spec`, or undefined when the spec cannot go through a
 * warm shell exactly (a newline in a word, an over-long line, an unresolvable command).
 */
export function commandLine(spec: ExecSpec): string | undefined {
  const words = [spec.file, ...spec.args];
  if (words.some((w) => w.includes('\n') || w.includes('\0'))) return undefined;
  if (!resolvable(spec.file, spec.env)) return undefined;
  const line = `${pwdLine(spec.env)}; exec ${words.map(shellQuote).join(' ')}\n`;
  return Buffer.byteLength(line) <= MAX_LINE ? line : undefined;
}

/** What makes warm shells interchangeable: directory, environment, pipes or terminal. */
export interface ShellSpec {
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** Who the command's stdio pipes belong to (ExecSpec.stdioOwner). */
  stdioOwner?: { uid: number; gid: number } | undefined;
}

export function warmKey(spec: ShellSpec): string {
  const owner = spec.stdioOwner ? `${spec.stdioOwner.uid}:${spec.stdioOwner.gid}` : '';
  return `${spec.tty ? 'tty' : 'pipes'}\0${owner}\0${spec.cwd}\0${JSON.stringify(spec.env)}`;
}

/**
 * A command handed to a warm shell: its process and its stdio — pipes (`io`), or on a terminal
 * the terminal's master end.
 */
export interface StartedCommand {
  child: ChildProcess;
  io?: CommandIo;
  master?: number;
  /**
   * Settles if the shell could not take its command line (it died while it waited); the
   * process is then the dead shell, not the command. Known right after the hand-over.
   */
  refused: Promise<void>;
}

/** One shell waiting for its command. */
export class WarmShell {
  private used = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly master: number | undefined,
    private readonly pipes: CommandPipes | undefined,
  ) {
    // A shell that fails to start or dies while waiting is simply not used.
    child.on('error', () => {});
    child.stdio[3]?.on('error', () => {});
  }

  /**
   * Starts a shell for commands run as `spec` describes, on `pipes` unless on a terminal (on
   * Node's sockets without them); undefined if it cannot start (the pipes are then closed).
   */
  static start(spec: ShellSpec, pipes?: CommandPipes): WarmShell | undefined {
    try {
      if (spec.tty) {
        const t = spawnOnTerminal(TERMINAL_TRAMPOLINE, [], spec, DEFAULT_TERMINAL_SIZE, true);
        return new WarmShell(t.child, t.master, undefined);
      }
      const stdio = pipes ? [...pipes.child, 'pipe' as const] : (['pipe', 'pipe', 'pipe', 'pipe'] as const);
      try {
        return new WarmShell(spawn('/bin/sh', ['-c', TRAMPOLINE], { cwd: spec.cwd, env: spec.env, stdio: stdioWithout([...stdio]) }), undefined, pipes);
      } finally {
        pipes?.spawned();
      }
    } catch {
      pipes?.close();
      return undefined;
    }
  }

  /** Still waiting for its command. */
  get alive(): boolean {
    return !this.used && this.child.exitCode === null && this.child.signalCode === null && this.child.pid !== undefined;
  }

  /** Hands the shell its command line; the returned process is the command from now on. */
  run(line: string): StartedCommand {
    this.used = true;
    const control = this.child.stdio[3] as Writable;
    // Writing to a pipe whose reader is gone fails at once (EPIPE; Node ignores SIGPIPE).
    const refused = new Promise<void>((resolve) => control.once('error', () => resolve()));
    control.end(line);
    if (this.master !== undefined) return { child: this.child, master: this.master, refused };
    return { child: this.child, io: this.pipes ?? socketsOf(this.child), refused };
  }

  /** Ends a shell that will not be used. */
  discard(): void {
    if (this.used) return;
    this.used = true;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    if (this.master !== undefined) closeHeld(this.master);
    this.pipes?.close();
  }
}
