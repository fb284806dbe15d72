/**
 * A command started for an exec session on plain pipes (stdout and stderr kept apart) — real
 * pipes, as Nomad's, from pipe-stock.ts; its terminal counterpart is pty-process.ts. Both look
 * the same to the websocket bridge.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { ExecSpec, ExecStream, ExecStreamEvents } from '../../drivers/driver.js';
import { takeCommandPipes, type CommandIo } from './command-pipes.js';
import { deferExecProcess } from './deferred-exec-process.js';
import { stdioWithout } from './held-fds.js';
import { sharedPipeStock, type PipeStock } from './pipe-stock.js';

/** Callbacks of a running exec process (the driver contract's ExecStreamEvents). */
export type ExecProcessEvents = ExecStreamEvents;

/** A running command the bridge can feed and resize (the driver contract's ExecStream). */
export type ExecProcess = ExecStream;

/** Exit code for a command killed by signal `sig`, as a shell reports it (128 + number). */
export function signalExitCode(sig: NodeJS.Signals | null): number {
  if (sig === null) return 0;
  return 128 + (osConstants.signals[sig] ?? 9);
}

/**
 * Starts `spec` on anonymous pipes from `stock` (Node's sockets where pipes cannot be made); a
 * spawn failure reports exit code 127 with the reason on stderr.
 */
export function startPipeProcess(spec: ExecSpec, events: ExecProcessEvents, stock: PipeStock = sharedPipeStock()): ExecProcess {
  const pipes = takeCommandPipes(stock, spec.stdioOwner);
  if (pipes === 'wait') return deferExecProcess(stock.ready().then(() => startPipeProcess(spec, events, stock)));
  let child: ChildProcess;
  try {
    child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: spec.env, stdio: stdioWithout(pipes ? pipes.child : ['pipe', 'pipe', 'pipe']) });
  } catch (err) {
    pipes?.close();
    throw err;
  } finally {
    pipes?.spawned();
  }
  return attachPipeProcess(child, pipes ?? socketsOf(child), spec, events);
}

/** The stdio streams Node made for `child` (spawned with 'pipe' for 0–2). */
export function socketsOf(child: ChildProcess): CommandIo {
  return { stdin: child.stdio[0] as Writable, stdout: child.stdio[1] as Readable, stderr: child.stdio[2] as Readable };
}

/**
 * Binds a command already started on `io` (a fresh spawn or a warm shell) to `events`. Its exit
 * is reported once it has exited and its stdout and stderr are read to the end, so no output
 * follows the exit frame; then this process's end of its stdin is closed.
 */
export function attachPipeProcess(child: ChildProcess, io: CommandIo, spec: ExecSpec, events: ExecProcessEvents): ExecProcess {
  const { stdin, stdout, stderr } = io;
  let exited = false;
  let code: number | undefined;
  let open = 2;
  const finish = (): void => {
    if (exited || code === undefined || open > 0) return;
    exited = true;
    stdin.destroy();
    events.onExit(code);
  };
  for (const [stream, name] of [[stdout, 'stdout'], [stderr, 'stderr']] as const) {
    stream.on('data', (d: Buffer) => events.onOutput(name, d));
    stream.on('error', () => { /* read to the end as far as it goes; 'close' follows */ });
    stream.on('close', () => {
      open--;
      finish();
    });
  }
  stdin.on('error', () => { /* the command closed its stdin; later input is dropped */ });
  child.on('error', (err) => {
    if (exited || code !== undefined) return;
    exited = true;
    for (const s of [stdin, stdout, stderr]) s.destroy();
    events.onOutput('stderr', Buffer.from(`failed to exec ${spec.file}: ${err.message}\n`));
    events.onExit(127);
  });
  child.on('exit', (c, sig) => {
    code = c ?? signalExitCode(sig);
    finish();
  });
  return {
    write(data) {
      if (!exited && stdin.writable) stdin.write(data);
    },
    closeStdin() {
      // The command sees end-of-file once what was written is in the pipe.
      if (!exited) stdin.end();
    },
    resize() { /* pipes have no size */ },
    kill() {
      if (!exited && code === undefined) child.kill(spec.killSignal ?? 'SIGKILL');
    },
  };
}
