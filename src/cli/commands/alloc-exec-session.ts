/**
 * The client side of an exec websocket: connects to an agent's
 * `/v1/client/allocation/:id/exec`, forwards stdin and terminal resizes as frames, writes the
 * output frames to stdout/stderr and resolves with the remote exit code. Used by
 * `caravan alloc exec` and by the exec benchmark.
 */
import type { RequestOptions } from 'node:https';
import { WebSocket } from 'ws';
import { encodeExecInput, parseExecOutput, type TerminalSize } from '../../http/exec/exec-frames.js';

/** What to run and where. */
export interface ExecSessionOptions {
  /** Agent base URL, e.g. "http://127.0.0.1:4646". */
  address: string;
  token?: string | undefined;
  /** TLS connection options (the CLI's -ca-cert, -client-cert …) for a wss:// agent. */
  tls?: Omit<RequestOptions, 'method' | 'headers'> | undefined;
  allocId: string;
  task: string;
  /** The command to run; ignored for an action, whose command the job declares. */
  command: string[];
  tty: boolean;
  /** Run this task action of the job (`/v1/job/:job/action`) instead of `command`. */
  action?: { jobId: string; name: string; group: string } | undefined;
}

/** Where the session's I/O goes. All optional: without stdin the remote stdin is closed at once. */
export interface ExecSessionIo {
  stdout?: (data: Buffer) => void;
  stderr?: (data: Buffer) => void;
  /** Registers a listener for local input; returns a function that unregisters it. */
  stdin?: (onData: (d: Buffer) => void, onEnd: () => void) => () => void;
  /** Registers a listener for terminal size changes; returns an unregister function. */
  resize?: (onSize: (s: TerminalSize) => void) => () => void;
  initialSize?: TerminalSize;
}

/** A session that ended without an exit code (refused, or the connection dropped). */
export class ExecSessionError extends Error {
  readonly code = 'EXEC_SESSION_FAILED';
  constructor(
    message: string,
    readonly closeCode: number,
  ) {
    super(message);
    this.name = 'ExecSessionError';
  }
}

/** The exec websocket URL for `opts`: the allocation's exec, or the job's action route. */
export function execUrl(opts: ExecSessionOptions): string {
  const base = opts.address.replace(/^http/, 'ws') + '/';
  if (opts.action) {
    // The query Nomad's Go client sends for an action (api/allocations_exec.go).
    const u = new URL(`/v1/job/${encodeURIComponent(opts.action.jobId)}/action`, base);
    u.searchParams.set('action', opts.action.name);
    u.searchParams.set('allocID', opts.allocId);
    u.searchParams.set('group', opts.action.group);
    u.searchParams.set('task', opts.task);
    u.searchParams.set('tty', String(opts.tty));
    return u.toString();
  }
  const u = new URL(`/v1/client/allocation/${encodeURIComponent(opts.allocId)}/exec`, opts.address.replace(/^http/, 'ws') + '/');
  u.searchParams.set('task', opts.task);
  u.searchParams.set('command', JSON.stringify(opts.command));
  u.searchParams.set('tty', String(opts.tty));
  return u.toString();
}

/**
 * Runs one exec session; resolves with the remote exit code, rejects with ExecSessionError.
 * It resolves at the exit frame, as Nomad's Go client returns (api/allocations_exec.go), and
 * then closes the socket: the output frames precede the exit frame, so nothing is lost, and the
 * caller does not wait for the close handshake.
 */
export function runExecSession(opts: ExecSessionOptions, io: ExecSessionIo = {}): Promise<number> {
  const headers: Record<string, string> = {};
  if (opts.token) headers['X-Nomad-Token'] = opts.token;
  const ws = new WebSocket(execUrl(opts), { headers, perMessageDeflate: false, ...(opts.tls ?? {}) });
  const cleanups: (() => void)[] = [];
  let exitCode: number | undefined;
  return new Promise<number>((resolve, reject) => {
    const finish = (): void => {
      for (const c of cleanups.splice(0)) c();
    };
    ws.on('open', () => {
      const send = (frame: Parameters<typeof encodeExecInput>[0]) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(encodeExecInput(frame));
      };
      if (io.initialSize) send({ tty_size: io.initialSize });
      if (io.resize) cleanups.push(io.resize((s) => send({ tty_size: s })));
      if (io.stdin) {
        cleanups.push(io.stdin((d) => send({ stdin: { data: d.toString('base64') } }), () => send({ stdin: { close: true } })));
      } else {
        send({ stdin: { close: true } });
      }
    });
    ws.on('message', (data) => {
      if (exitCode !== undefined) return;
      const f = parseExecOutput(data.toString());
      if (f.stdout?.data) io.stdout?.(Buffer.from(f.stdout.data, 'base64'));
      if (f.stderr?.data) io.stderr?.(Buffer.from(f.stderr.data, 'base64'));
      if (!f.exited) return;
      // Nomad omits exit_code when it is 0 (`{"exited":true,"result":{}}`), as its own client reads it.
      exitCode = typeof f.result?.exit_code === 'number' ? f.result.exit_code : 0;
      finish();
      resolve(exitCode);
      ws.close(1000);
    });
    ws.on('error', (err) => {
      finish();
      // Nomad closes the connection without a close frame right after the exit frame.
      if (exitCode === undefined) reject(new ExecSessionError(`exec failed: ${err.message}`, 0));
    });
    ws.on('close', (code, reason) => {
      finish();
      if (exitCode === undefined) reject(new ExecSessionError(reason.toString() || `websocket closed (code ${code}) before the command exited`, code));
    });
  });
}
