/**
 * Entry point of the exec spawner: a small process the agent forks once, which starts exec
 * commands (pipes or a pseudo-terminal) on the agent's behalf. Forking a command from the agent
 * costs ~5–25 ms (fork copies the page tables of a large process); from this one, about 1 ms.
 *
 * Two ways in: `start` relays a command's I/O over IPC (for a session the agent keeps), and
 * `session` hands over the client's socket of an exec upgrade, so this process answers the
 * handshake and runs the websocket itself — the output then goes from here to the client with
 * no hop through the agent. When the agent goes away, every command started here is killed and
 * the spawner exits.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import type { ExecSpec } from '../../drivers/driver.js';
import type { ExecProcess } from './exec-process.js';
import { startPipeProcess, startPtyProcess } from './exec-process.js';
import { EXEC_WS_OPTIONS, runExecSession } from './exec-session.js';
import type { SpawnerEvent, SpawnerRequest } from './exec-spawner-protocol.js';

/** Commands started here, by request id; `session` ones too, so a disconnect kills them all. */
const procs = new Map<number, ExecProcess>();
let wss: WebSocketServer | undefined;
const send = (ev: SpawnerEvent): void => {
  if (process.connected) process.send!(ev);
};

/** The ExecSpec of a start or session request. */
function specOf(msg: Extract<SpawnerRequest, { op: 'start' | 'session' }>): ExecSpec {
  return { file: msg.file, args: msg.args, cwd: msg.cwd, env: msg.env, ...(msg.killSignal ? { killSignal: msg.killSignal } : {}) };
}

/** Completes the handed-over upgrade on `socket` and runs the session until its socket closes. */
function adopt(msg: Extract<SpawnerRequest, { op: 'session' }>, socket: Socket | undefined): void {
  if (!socket) {
    // The agent's socket was gone before it could be sent: nothing to serve.
    send({ op: 'ended', id: msg.id });
    return;
  }
  socket.once('close', () => {
    procs.get(msg.id)?.kill();
    procs.delete(msg.id);
    send({ op: 'ended', id: msg.id });
  });
  wss ??= new WebSocketServer(EXEC_WS_OPTIONS);
  // ws reads only the method and the handshake headers of the request.
  const req = { method: msg.method, headers: msg.headers } as IncomingMessage;
  wss.handleUpgrade(req, socket, Buffer.from(msg.head.buffer, msg.head.byteOffset, msg.head.byteLength), (ws) => {
    procs.set(msg.id, runExecSession(ws, specOf(msg), msg.tty));
  });
}

process.on('message', (msg: SpawnerRequest, handle?: Socket) => {
  if (msg.op === 'session') {
    adopt(msg, handle);
    return;
  }
  if (msg.op === 'start') {
    const spec = specOf(msg);
    const events = {
      onOutput: (stream: 'stdout' | 'stderr', data: Buffer) => send({ op: 'output', id: msg.id, stream, data }),
      onExit: (code: number) => {
        procs.delete(msg.id);
        send({ op: 'exit', id: msg.id, code });
      },
    };
    procs.set(msg.id, msg.tty ? startPtyProcess(spec, undefined, events) : startPipeProcess(spec, events));
    return;
  }
  const p = procs.get(msg.id);
  if (!p) return;
  if (msg.op === 'stdin') p.write(Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength));
  else if (msg.op === 'closeStdin') p.closeStdin();
  else if (msg.op === 'resize') p.resize(msg.size);
  else if (msg.op === 'kill') p.kill();
});

process.on('disconnect', () => {
  for (const p of procs.values()) p.kill();
  process.exit(0);
});
