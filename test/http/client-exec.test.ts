import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { allocOnNode, startServer } from './real-server.js';
import { b64, FakeAllocClient, runExec, startAgent, until, type RunningAgent } from './client-harness.js';

const ALLOC = 'aaaaaaaa-1111-2222-3333-444444444444';
let client: FakeAllocClient;
let agent: RunningAgent;

before(async () => {
  client = new FakeAllocClient();
  client.addAlloc(ALLOC, ['web']);
  agent = await startAgent({ client });
});
after(async () => {
  await agent.close();
  client.cleanup();
});

test('exec without tty keeps stdout and stderr apart and reports the exit code', async () => {
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'] });
  assert.equal(r.stdout, 'out\n');
  assert.equal(r.stderr, 'err\n');
  assert.equal(r.exitCode, 3);
  assert.equal(r.closeCode, 1000);
});

test('exec streams stdin to the command and closes it on request', async () => {
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/cat'] }, async (send) => {
    send({ stdin: { data: b64('hello ') } });
    send({ stdin: { data: b64('world') } });
    send({ stdin: { close: true } });
  });
  assert.equal(r.stdout, 'hello world');
  assert.equal(r.exitCode, 0);
});

test('exec runs in the task directory', async () => {
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/sh', '-c', 'pwd'] });
  assert.equal(r.stdout.trim(), client.execSpec(ALLOC, 'web', ['x']).cwd);
});

test('exec with tty echoes stdin through a pseudo-terminal and merges output on stdout', async () => {
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/sh', '-c', 'read line; echo "got:$line" >&2'], tty: true }, async (send) => {
    send({ stdin: { data: b64('abc\r') } });
  });
  assert.match(r.stdout, /abc/);
  assert.match(r.stdout, /got:abc/);
  assert.equal(r.stderr, '');
  assert.equal(r.exitCode, 0);
});

test('exec with tty resizes the terminal on tty_size', async () => {
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/sh', '-c', 'read x; stty size'], tty: true }, async (send, output) => {
    send({ tty_size: { height: 40, width: 123 } });
    await new Promise((r) => setTimeout(r, 20));
    send({ stdin: { data: b64('\r') } });
    await until(() => output().includes('40 123'));
  });
  assert.match(r.stdout, /40 123/);
  assert.equal(r.exitCode, 0);
});

test('bad exec requests are closed with a reason naming the field', async () => {
  const badJson = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: '["/bin/sh",' });
  assert.equal(badJson.closeCode, 1008);
  assert.match(badJson.closeReason, /"command"/);
  const notArray = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: '"ls"' });
  assert.match(notArray.closeReason, /"command"/);
  const noTask = await runExec(agent.wsUrl, ALLOC, { command: ['/bin/true'] });
  assert.match(noTask.closeReason, /"task"/);
  const unknownTask = await runExec(agent.wsUrl, ALLOC, { task: 'db', command: ['/bin/true'] });
  assert.equal(unknownTask.closeCode, 1008);
  assert.match(unknownTask.closeReason, /task "db" not found/);
  const unknownAlloc = await runExec(agent.wsUrl, 'nope', { task: 'web', command: ['/bin/true'] });
  assert.match(unknownAlloc.closeReason, /Unknown allocation/);
  const badTty = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/true'], tty: 'maybe' as unknown as boolean });
  assert.match(badTty.closeReason, /"tty"/);
});

test('a malformed input frame ends the session with a reason naming the field', async () => {
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/cat'] }, async (send) => {
    send({ tty_size: { height: -1, width: 80 } });
  });
  assert.equal(r.closeCode, 1008);
  assert.match(r.closeReason, /tty_size\.height/);
});

test('a command that cannot start reports exit code 127', async () => {
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/no/such/binary'] });
  assert.equal(r.exitCode, 127);
  assert.match(r.stderr, /failed to exec/);
});

test('exec without a websocket upgrade is a 400', async () => {
  const res = await agent.app.inject({ url: `/v1/client/allocation/${ALLOC}/exec?task=web&command=["ls"]` });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /websocket/);
});

test('a server without the allocation forwards exec to the client holding it', async () => {
  const sut = await startServer();
  const id = await allocOnNode(sut.server, 'node-client', agent.hostPort);
  client.aliasAlloc(ALLOC, id);
  const front = await startAgent({ server: sut.server });
  try {
    const r = await runExec(front.wsUrl, id, { task: 'web', command: ['/bin/sh', '-c', 'cat; echo done >&2; exit 5'] }, async (send) => {
      send({ stdin: { data: b64('via server') } });
      send({ stdin: { close: true } });
    });
    assert.equal(r.stdout, 'via server');
    assert.equal(r.stderr, 'done\n');
    assert.equal(r.exitCode, 5);
    const unknown = await runExec(front.wsUrl, 'other', { task: 'web', command: ['/bin/true'] });
    assert.match(unknown.closeReason, /Unknown allocation/);
  } finally {
    await front.close();
    await sut.close();
  }
});

/** Sends a raw websocket upgrade request for `path` and resolves with the status line of the answer. */
function rawUpgrade(httpUrl: string, path: string, key = 'dGhlIHNhbXBsZSBub25jZQ=='): Promise<string> {
  const { hostname, port } = new URL(httpUrl);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname, () => {
      sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n`);
    });
    let data = '';
    sock.setEncoding('utf8').on('data', (d: string) => (data += d));
    sock.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
    sock.on('error', reject);
  });
}

test('malformed upgrade requests are answered 400 and do not take the agent down', async () => {
  assert.match(await rawUpgrade(agent.baseUrl, '//'), /^HTTP\/1\.1 400/);
  assert.match(await rawUpgrade(agent.baseUrl, '/v1/client/allocation/%E0%A4%A/exec'), /^HTTP\/1\.1 400/);
  const r = await runExec(agent.wsUrl, ALLOC, { task: 'web', command: ['/bin/sh', '-c', 'exit 0'] });
  assert.equal(r.exitCode, 0);
});

test('a handshake the websocket server refuses starts no command', async () => {
  // Commands start while the handshake is answered; one that cannot become a session must not run.
  const marker = join(client.dirs.get(ALLOC)!, 'web', 'ran');
  const command = encodeURIComponent(JSON.stringify(['/bin/sh', '-c', `touch ${marker}`]));
  const path = `/v1/client/allocation/${ALLOC}/exec?task=web&command=${command}`;
  assert.match(await rawUpgrade(agent.baseUrl, path, 'not-a-key'), /^HTTP\/1\.1 400/);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(existsSync(marker), false, 'the command ran for a refused handshake');
  // The same request with a valid key runs it.
  assert.match(await rawUpgrade(agent.baseUrl, path), /^HTTP\/1\.1 101/);
  await until(() => existsSync(marker));
});
