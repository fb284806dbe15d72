/**
 * One exec session: a websocket bound to a started command. Input frames feed the command's
 * stdin and terminal size; its output goes out as frames; when it exits the session sends the
 * exit frame and closes the socket normally (1000). If the client goes away first, the command
 * is killed. Nothing is prepared per session beyond the spawn, so open → exit stays a few ms.
 */
import type { WebSocket } from 'ws';
import type { ExecSpec } from '../../drivers/driver.js';
import { ExecFrameError, exitedFrame, outputFrame, parseExecInput } from './exec-frames.js';
import { type ExecProcess, startPipeProcess } from './exec-process.js';
import { startPtyProcess } from './pty-process.js';
import type { ExecSpawner } from './exec-spawner.js';

/** Websocket close codes the session uses (RFC 6455 §7.4.1). */
export const WsCloseCode = {
  Normal: 1000,
  PolicyViolation: 1008,
  InternalError: 1011,
} as const;
export type WsCloseCode = (typeof WsCloseCode)[keyof typeof WsCloseCode];

/** Maps an HTTP status to the close code Nomad uses for the same failure. */
export function closeCodeForStatus(status: number): WsCloseCode {
  return status >= 400 && status < 500 ? WsCloseCode.PolicyViolation : WsCloseCode.InternalError;
}

/** Close reasons are limited to 123 bytes by the protocol; longer messages are cut. */
export function closeReason(message: string): string {
  const b = Buffer.from(message);
  return b.length <= 123 ? message : b.subarray(0, 120).toString('utf8') + '...';
}

/**
 * Ends a session with an error the way Nomad's agent does: a close frame whose code reflects
 * the HTTP status (1008 for 4xx, 1011 otherwise) and whose reason carries the message.
 */
export function closeWithError(ws: WebSocket, status: number, message: string): void {
  if (ws.readyState === ws.OPEN) ws.close(closeCodeForStatus(status), closeReason(message));
}

/** A command started for a session whose websocket is not open yet. */
export interface PendingExecSession {
  /** Binds the opened socket: output so far is sent, then the session runs as usual. */
  attach(ws: WebSocket): void;
  /** The socket never opened: ends the command. */
  abort(): void;
}

/**
 * Starts `spec` before its websocket is open, so the spawn overlaps the handshake; output and
 * the exit wait for attach. A host command is started by `spawner` (a small helper process)
 * when given, else by this process.
 */
export function startExecSession(spec: ExecSpec, tty: boolean, spawner?: ExecSpawner): PendingExecSession {
  let ws: WebSocket | undefined;
  let done = false;
  const queued: string[] = [];
  const send = (text: string): void => {
    if (!ws) queued.push(text);
    else if (ws.readyState === ws.OPEN) ws.send(text);
  };
  const close = (): void => {
    if (ws && ws.readyState === ws.OPEN) ws.close(WsCloseCode.Normal);
  };
  const events = {
    onOutput(stream: 'stdout' | 'stderr', data: Buffer) {
      send(outputFrame(stream, data));
    },
    onExit(exitCode: number) {
      if (done) return;
      done = true;
      send(exitedFrame(exitCode));
      close();
    },
  };
  const proc: ExecProcess = spec.start
    ? spec.start(tty, events)
    : spawner
      ? spawner.start(spec, tty, events)
      : tty
        ? startPtyProcess(spec, undefined, events)
        : startPipeProcess(spec, events);

  return {
    attach(socket) {
      ws = socket;
      for (const text of queued.splice(0)) socket.send(text);
      if (done) close();
      socket.on('message', (data, isBinary) => {
        if (done) return;
        const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
        try {
          const input = parseExecInput(text);
          if (input.ttySize) proc.resize(input.ttySize);
          if (input.stdinData && input.stdinData.length > 0) proc.write(input.stdinData);
          if (input.stdinClose) proc.closeStdin();
        } catch (err) {
          if (!(err instanceof ExecFrameError)) throw err;
          done = true;
          proc.kill();
          closeWithError(socket, err.status, err.message);
        }
      });
      socket.on('close', () => {
        if (!done) {
          done = true;
          proc.kill();
        }
      });
      socket.on('error', () => { /* 'close' follows and kills the command */ });
    },
    abort() {
      if (done) return;
      done = true;
      proc.kill();
    },
  };
}

/** Runs `spec` for the open websocket `ws` until the command exits or the socket closes. */
export function runExecSession(ws: WebSocket, spec: ExecSpec, tty: boolean, spawner?: ExecSpawner): void {
  startExecSession(spec, tty, spawner).attach(ws);
}
