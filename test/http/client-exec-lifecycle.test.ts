import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { b64, FakeAllocClient, runExec, startAgent, until } from './client-harness.js';

const ALLOC = 'bbbbbbbb-1111-2222-3333-444444444444';

const alive = (pid: number): boolean => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

/** Opens an exec session of `script` (sh -c) and collects its stdout. */
function openShell(wsUrl: string, script: string): { ws: WebSocket; out: () => string; closed: Promise<number> } {
  const q = new URLSearchParams({ task: 'web', command: JSON.stringify(['/bin/sh', '-c', script]) });
  const ws = new WebSocket(`${wsUrl}/v1/client/allocation/${ALLOC}/exec?${q}`);
  let out = '';
  ws.on('message', (d) => {
    const f = JSON.parse(String(d)) as { stdout?: { data?: string } };
    if (f.stdout?.data) out += Buffer.from(f.stdout.data, 'base64').toString();
  });
  const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
  ws.on('error', () => {});
  return { ws, out: () => out, closed };
}

test('closing the agent kills the command of a running exec session and ends its connection', async () => {
  const client = new FakeAllocClient();
  client.addAlloc(ALLOC, ['web']);
  const agent = await startAgent({ client });
  let pid = 0;
  try {
    const s = openShell(agent.wsUrl, 'echo $$; exec sleep 30');
    await until(() => /^\d+\n/.test(s.out()));
    pid = Number(s.out().trim());
    assert.ok(alive(pid));
    await agent.close();
    await s.closed;
    await until(() => !alive(pid));
  } finally {
    await agent.close().catch(() => undefined);
    if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    client.cleanup();
  }
});

test('frames the client sends right after the handshake all reach the command the spawner runs', async () => {
  // What the client sends right after the handshake reaches the command, whole, in every session.
  const client = new FakeAllocClient();
  client.addAlloc(ALLOC, ['web']);
  const agent = await startAgent({ client });
  // A busy agent: its event loop runs in bursts, so the handshake, the client's first frames and
  // the spawner's messages wait for the same turn.
  const busy = setInterval(() => {
    const until = Date.now() + 15;
    while (Date.now() < until) {
      // hold the event loop
    }
  }, 20);
  try {
    const runs = Array.from({ length: 40 }, (_, i) =>
      runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/cat'] }, async (send) => {
        send({ stdin: { data: b64(`line ${i}\n`) } });
        send({ stdin: { close: true } });
      }),
    );
    const results = await Promise.all(runs);
    results.forEach((r, i) => {
      assert.equal(r.stdout, `line ${i}\n`, `session ${i}`);
      assert.equal(r.exitCode, 0, `session ${i}`);
    });
  } finally {
    clearInterval(busy);
    await agent.close();
    client.cleanup();
  }
});
