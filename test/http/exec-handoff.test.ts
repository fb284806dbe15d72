import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { WebSocket } from 'ws';
import { b64, FakeAllocClient, runExec, startAgent, until } from './client-harness.js';

const ALLOC = 'bbbbbbbb-1111-2222-3333-444444444444';

/** Inodes of the established TCP connections whose local port is `port` (the agent's side). */
function serverSideInodes(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[1]!.endsWith(`:${hex}`) && f[3] === '01') out.push(f[9]!);
    }
  }
  return out;
}

/** Whether process `pid` holds a descriptor of the socket `inode`. */
function holdsSocket(pid: number, inode: string): boolean {
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

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

test('exec of a host command: the exec spawner takes the connection over and serves the websocket itself', async () => {
  const client = new FakeAllocClient();
  client.addAlloc(ALLOC, ['web']);
  const agent = await startAgent({ client });
  try {
    // $PPID is the spawner; `read` keeps the session open while the sockets are inspected.
    const s = openShell(agent.wsUrl, 'echo $PPID; read x');
    await until(() => /^\d+\n/.test(s.out()));
    const spawnerPid = Number(s.out().trim());
    assert.notEqual(spawnerPid, process.pid);
    const port = Number(new URL(agent.baseUrl).port);
    const inodes = serverSideInodes(port);
    assert.equal(inodes.length, 1, `one connection to the agent (${inodes.join(',')})`);
    assert.ok(holdsSocket(spawnerPid, inodes[0]!), 'the spawner holds the client connection');
    assert.ok(!holdsSocket(process.pid, inodes[0]!), 'the agent no longer holds it');
    s.ws.send(JSON.stringify({ stdin: { close: true } }));
    assert.equal(await s.closed, 1000);
  } finally {
    await agent.close();
    client.cleanup();
  }
});

test('closing the agent kills the command of a session the exec spawner runs, and ends its connection', async () => {
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
    assert.notEqual(await s.closed, 1000);
    await until(() => !alive(pid));
  } finally {
    await agent.close().catch(() => undefined);
    if (pid > 0 && alive(pid)) process.kill(pid, 'SIGKILL');
    client.cleanup();
  }
});

test('frames the client sends right after the handshake all reach the command the spawner runs', async () => {
  // The agent's copy of the connection must not read (and drop) what the client sends once the
  // spawner has answered the handshake: every session's stdin arrives whole.
  const client = new FakeAllocClient();
  client.addAlloc(ALLOC, ['web']);
  const agent = await startAgent({ client });
  // A busy agent: its event loop runs in bursts, so the spawner's handshake, the client's first
  // frames and the spawner's acknowledgement of the socket all wait for the same turn.
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
