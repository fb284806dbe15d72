/**
 * A command started for an exec session on plain pipes (stdout and stderr kept apart); its
 * terminal counterpart is pty-process.ts. Both look the same to the websocket bridge.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { ExecSpec, ExecStream, ExecStreamEvents } from '../../drivers/driver.js';
import { stdioWithout } from './held-fds.js';

/** Callbacks of a running exec process (the driver contract's ExecStreamEvents). */
export type ExecProcessEvents = ExecStreamEvents;

/** A running command the bridge can feed and resize (the driver contract's ExecStream). */
export type ExecProcess = ExecStream;

/** Exit code for a command killed by signal `sig`, as a shell reports it (128 + number). */
export function signalExitCode(sig: NodeJS.Signals | null): number {
  if (sig === null) return 0;
  return 128 + (osConstants.signals[sig] ?? 9);
}

/** Starts `spec` on pipes; a spawn failure reports exit code 127 with the reason on stderr. */
export function startPipeProcess(spec: ExecSpec, events: ExecProcessEvents): ExecProcess {
  return attachPipeProcess(spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdio: stdioWithout(['pipe', 'pipe', 'pipe']) }), spec, events);
}

/** Binds a command already started on pipes (a fresh spawn or a warm shell) to `events`. */
export function attachPipeProcess(child: ChildProcess, spec: ExecSpec, events: ExecProcessEvents): ExecProcess {
  const [stdin, stdout, stderr] = [child.stdio[0] as Writable, child.stdio[1] as Readable, child.stdio[2] as Readable];
  let exited = false;
  stdout.on('data', (d: Buffer) => events.onOutput('stdout', d));
  stderr.on('data', (d: Buffer) => events.onOutput('stderr', d));
  stdin.on('error', () => { /* the command closed its stdin; later input is dropped */ });
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
      if (!exited && stdin.writable) stdin.write(data);
    },
    closeStdin() {
      if (!exited) stdin.end();
    },
    resize() { /* pipes have no size */ },
    kill() {
      if (!exited) child.kill(spec.killSignal ?? 'SIGKILL');
    },
  };
}
