import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { execUrl, runExecSession } from '../../src/cli/commands/alloc-exec-session.js';

/** A websocket peer that answers an exec session the way a Nomad agent does, via `script`. */
async function peer(script: (ws: WebSocket) => void): Promise<{ address: string; close: () => Promise<void> }> {
  const server: Server = createServer();
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => script(ws));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const opts = (address: string) => ({ address, allocId: 'a1', task: 't', command: ['echo', 'hi'], tty: false });

test("exec session: Nomad's exit frame without exit_code, then a drop without a close frame, is exit 0", async () => {
  const p = await peer((ws) => {
    ws.send(JSON.stringify({ stdout: { data: Buffer.from('hi\n').toString('base64') } }));
    ws.send('{"exited":true,"result":{}}', () => ws.terminate()); // no close frame: the client sees 1006
  });
  try {
    const out: Buffer[] = [];
    const code = await runExecSession(opts(p.address), { stdout: (d) => out.push(d) });
    assert.equal(code, 0);
    assert.equal(Buffer.concat(out).toString(), 'hi\n');
  } finally {
    await p.close();
  }
});

test('exec session: an exit frame with a non-zero exit_code answers it', async () => {
  const p = await peer((ws) => ws.send('{"exited":true,"result":{"exit_code":3}}', () => ws.close()));
  try {
    assert.equal(await runExecSession(opts(p.address)), 3);
  } finally {
    await p.close();
  }
});

test('exec session: a connection dropped before any exit frame is an error', async () => {
  const p = await peer((ws) => ws.send(JSON.stringify({ stdout: { data: 'aGk=' } }), () => ws.terminate()));
  try {
    await assert.rejects(runExecSession(opts(p.address)), /before the command exited/);
  } finally {
    await p.close();
  }
});

test('exec session: resolves at the exit frame without waiting for the peer to close, as Nomad\'s client does', async () => {
  let peerSocket: WebSocket | undefined;
  // The peer sends the exit frame and keeps the connection open: only the exit frame can end the session.
  const p = await peer((ws) => {
    peerSocket = ws;
    ws.send('{"exited":true,"result":{"exit_code":4}}');
  });
  try {
    const code = await Promise.race([
      runExecSession(opts(p.address)),
      new Promise<string>((r) => setTimeout(() => r('still waiting for the close'), 5_000).unref()),
    ]);
    assert.equal(code, 4);
    // The client closes the socket itself once it has the exit code.
    await new Promise<void>((r) => (peerSocket!.readyState === peerSocket!.CLOSED ? r() : peerSocket!.once('close', () => r())));
  } finally {
    await p.close();
  }
});

test('execUrl for an action: /v1/job/:job/action with Nomad\'s query, and no command', () => {
  const u = new URL(execUrl({ address: 'http://127.0.0.1:4646', allocId: 'a1', task: 't', command: ['/bin/sh'], tty: false, action: { jobId: 'batch/dispatch-1', name: 'greet', group: 'g' } }));
  assert.equal(u.protocol, 'ws:');
  assert.equal(u.pathname, '/v1/job/batch%2Fdispatch-1/action');
  assert.deepEqual(Object.fromEntries(u.searchParams), { action: 'greet', allocID: 'a1', group: 'g', task: 't', tty: 'false' });
});
