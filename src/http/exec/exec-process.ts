/**
 * A command started for an exec session: either a pseudo-terminal (tty=true, @lydell/node-pty; stdout
 * and stderr are one stream) or plain pipes (tty=false; stdout and stderr kept apart). Both
 * look the same to the websocket bridge.
 */
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import * as pty from '@lydell/node-pty';
import type { ExecSpec, ExecStream, ExecStreamEvents } from '../../drivers/driver.js';
import type { TerminalSize } from './exec-frames.js';

/** Callbacks of a running exec process (the driver contract's ExecStreamEvents). */
export type ExecProcessEvents = ExecStreamEvents;

/** A running command the bridge can feed and resize (the driver contract's ExecStream). */
export type ExecProcess = ExecStream;

const DEFAULT_SIZE: TerminalSize = { width: 80, height: 24 };

/** Exit code for a command killed by signal `sig`, as a shell reports it (128 + number). */
function signalExitCode(sig: NodeJS.Signals | null): number {
  if (sig === null) return 0;
  return 128 + (osConstants.signals[sig] ?? 9);
}

/** Starts `spec` on pipes; a spawn failure reports exit code 127 with the reason on stderr. */
export function startPipeProcess(spec: ExecSpec, events: ExecProcessEvents): ExecProcess {
  const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let exited = false;
  child.stdout.on('data', (d: Buffer) => events.onOutput('stdout', d));
  child.stderr.on('data', (d: Buffer) => events.onOutput('stderr', d));
  child.stdin.on('error', () => { /* the command closed its stdin; later input is dropped */ });
  child.on('error', (err) => {
    if (exited) return;
    exited = true;
    events.onOutput('stderr', Buffer.from(`failed to exec ${spec.file}: ${err.message}\n`));
    events.onExit(127);
  });
  // 'close' (not 'exit') waits for stdout/stderr to drain, so no output follows the exit frame.
  child.on('close', (code, sig) => {
    if (exited) return;
    exited = true;
    events.onExit(code ?? signalExitCode(sig));
  });
  return {
    write(data) {
      if (!exited && child.stdin.writable) child.stdin.write(data);
    },
    closeStdin() {
      if (!exited) child.stdin.end();
    },
    resize() { /* pipes have no size */ },
    kill() {
      if (!exited) child.kill(spec.killSignal ?? 'SIGKILL');
    },
  };
}

/** Starts `spec` in a new pseudo-terminal of `size`; everything it prints arrives as stdout. */
export function startPtyProcess(spec: ExecSpec, size: TerminalSize | undefined, events: ExecProcessEvents): ExecProcess {
  const s = size ?? DEFAULT_SIZE;
  let term: pty.IPty;
  try {
    term = pty.spawn(spec.file, spec.args, {
      name: spec.env.TERM ?? 'xterm-256color',
      cols: Math.max(1, s.width),
      rows: Math.max(1, s.height),
      cwd: spec.cwd,
      env: spec.env,
    });
  } catch (err) {
    queueMicrotask(() => {
      events.onOutput('stdout', Buffer.from(`failed to exec ${spec.file}: ${(err as Error).message}\r\n`));
      events.onExit(127);
    });
    return { write() {}, closeStdin() {}, resize() {}, kill() {} };
  }
  let exited = false;
  term.onData((d) => events.onOutput('stdout', Buffer.from(d, 'utf8')));
  term.onExit(({ exitCode, signal }) => {
    exited = true;
    events.onExit(signal ? 128 + signal : exitCode);
  });
  return {
    write(data) {
      if (!exited) term.write(data.toString('utf8'));
    },
    closeStdin() {
      // A terminal has no separate stdin to close: send EOF (^D) as a terminal user would.
      if (!exited) term.write('\x04');
    },
    resize(sz) {
      if (!exited && sz.width > 0 && sz.height > 0) term.resize(sz.width, sz.height);
    },
    kill() {
      if (!exited) term.kill(spec.killSignal ?? 'SIGKILL');
    },
  };
}
