/**
 * What this machine allows for the exec round trip, measured with the benchmark's own client
 * against a bare websocket server in one small Node process of its own (no routing, no ACL, no
 * helper process; forked from the benchmark, it is as small as Caravan's exec spawner):
 * - `none`: answers the exit frame at once — the websocket round trip alone;
 * - `preforked`: runs `echo hi` on a shell forked before the session, one per session, all
 *   forked before the run — the best any warm-shell design can do, since nothing is forked
 *   while sessions run;
 * - `spawned`: spawns `echo hi` for each session.
 * Caravan's figures read against these: the agent adds its route, the hop to its exec spawner and
 * back, and in sessions back to back the fork.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex, Writable } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { exitedFrame, outputFrame } from '../../src/http/exec/exec-frames.js';

export type FloorKind = 'none' | 'preforked' | 'spawned';

/** Waits for one command line on fd 3 and runs it in place, as Caravan's warm shells do. */
const WAITING_SHELL = 'IFS= read -r line <&3 || exit 127; exec 3<&-; eval "$line"';

export interface FloorServer {
  address: string;
  /** Forks `count` shells ahead (preforked only); resolves once they are forked. */
  prefork(count: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a floor server of `kind` in a process of its own. */
export async function startFloorServer(kind: FloorKind): Promise<FloorServer> {
  const child = fork(fileURLToPath(import.meta.url), [kind], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const reply = (): Promise<string> =>
    new Promise((ok, fail) => {
      child.once('message', (m) => ok(String(m)));
      child.once('exit', () => fail(new Error('the floor server exited')));
    });
  const address = await reply();
  return {
    address,
    async prefork(count) {
      const done = reply();
      child.send(count);
      await done;
    },
    async close() {
      const gone = new Promise((ok) => child.once('exit', ok));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** The server itself, in the forked process: preforks when asked, killed when done. */
async function serve(kind: FloorKind): Promise<void> {
  const shells: ChildProcess[] = [];
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const server = createServer();
  const run = (ws: WebSocket, child: ChildProcess): void => {
    child.stdout!.on('data', (d: Buffer) => ws.send(outputFrame('stdout', d)));
    child.on('close', (code) => {
      ws.send(exitedFrame(code ?? 1));
      ws.close(1000);
    });
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    let child: ChildProcess | undefined;
    if (kind === 'preforked') {
      child = shells.shift() ?? spawn('/bin/sh', ['-c', WAITING_SHELL], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
      (child.stdio[3] as Writable).end("exec 'echo' 'hi'\n");
    } else if (kind === 'spawned') {
      child = spawn('echo', ['hi'], { stdio: ['pipe', 'pipe', 'pipe'] });
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (child) run(ws, child);
      else {
        ws.send(exitedFrame(0));
        ws.close(1000);
      }
    });
  });
  process.on('message', (count: number) => {
    while (kind === 'preforked' && shells.length < count) shells.push(spawn('/bin/sh', ['-c', WAITING_SHELL], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] }));
    process.send!('forked');
  });
  process.on('SIGTERM', () => {
    for (const s of shells) s.kill('SIGKILL');
    process.exit(0);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  process.send!(`http://127.0.0.1:${port}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) void serve(process.argv[2] as FloorKind);
