import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/main.js';
import { lastLines } from '../../src/cli/commands/alloc-logs.js';
import { newTaskState } from '../../src/client/taskrunner/task-event.js';
import { FakeAllocClient, startAgent, type RunningAgent } from '../http/client-harness.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from '../http/real-server.js';
import { mockNode } from '../mock/factories.js';

let ALLOC = '';
let client: FakeAllocClient;
let sut: ServerUnderTest;
let agent: RunningAgent;

before(async () => {
  client = new FakeAllocClient('node-1');
  sut = await startServer();
  agent = await startAgent({ server: sut.server, client });
  const node = mockNode({ ID: 'node-1', HTTPAddr: agent.hostPort });
  const { allocs } = await placeJob(sut.server, serviceJob('web', 1), node);
  ALLOC = allocs[0]!.ID;
  const dir = client.addAlloc(ALLOC, ['web']);
  writeFileSync(join(dir, 'alloc', 'logs', 'web.stdout.0'), 'l1\nl2\n');
  writeFileSync(join(dir, 'alloc', 'logs', 'web.stdout.1'), 'l3\nl4\n');
  writeFileSync(join(dir, 'alloc', 'logs', 'web.stderr.0'), 'boom\n');
  writeFileSync(join(dir, 'web', 'local', 'app.conf'), 'port = 8080\n');
  const web = { ...newTaskState(), State: 'running' as const };
  await sut.server.updateAllocsFromClient([{ ID: ALLOC, NodeID: node.ID, ClientStatus: 'running', ClientDescription: '', TaskStates: { web } }], node.SecretID);
});
after(async () => {
  await agent.close();
  await sut.close();
  client.cleanup();
});

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['node', 'caravan', ...args], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { CARAVAN_ADDR: agent.baseUrl },
  });
  return { code, out, err };
}

test('alloc exec runs a command by alloc prefix and exits with its exit code', async () => {
  const r = await run('alloc', 'exec', ALLOC.slice(0, 8), '/bin/sh', '-c', 'echo hi; echo oops >&2; exit 4');
  assert.equal(r.out, 'hi\n');
  assert.equal(r.err, 'oops\n');
  assert.equal(r.code, 4);
});

test('alloc exec into an unknown task fails with the reason', async () => {
  const r = await run('alloc', 'exec', '-task', 'db', ALLOC, '--', '/bin/true');
  assert.equal(r.code, 1);
  assert.match(r.err, /task "db" not found/);
});

test('alloc logs prints stdout across rotated files, stderr, and the tail', async () => {
  assert.equal((await run('alloc', 'logs', ALLOC)).out, 'l1\nl2\nl3\nl4\n');
  assert.equal((await run('alloc', 'logs', '-stderr', ALLOC, 'web')).out, 'boom\n');
  assert.equal((await run('alloc', 'logs', '-tail', '-n', '3', ALLOC)).out, 'l2\nl3\nl4\n');
  assert.equal((await run('alloc', 'logs', '-tail', '-c', '3', ALLOC)).out, 'l4\n');
  assert.equal(lastLines('a\nb\nc', 2), 'b\nc');
});

test('alloc fs lists directories and prints files', async () => {
  const ls = await run('alloc', 'fs', ALLOC, 'web/local');
  assert.equal(ls.code, 0);
  assert.match(ls.out, /Mode\s+Size\s+Modified Time\s+Name/);
  assert.match(ls.out, /app\.conf/);
  assert.equal((await run('alloc', 'fs', ALLOC, '/web/local/app.conf')).out, 'port = 8080\n');
  const escape = await run('alloc', 'fs', ALLOC, '../../etc/passwd');
  assert.equal(escape.code, 1);
  assert.match(escape.err, /403/);
});

test('alloc restart and signal reach the client', async () => {
  client.calls.length = 0;
  assert.equal((await run('alloc', 'restart', ALLOC, 'web')).code, 0);
  assert.equal((await run('alloc', 'signal', '-s', 'SIGUSR1', ALLOC)).code, 0);
  assert.deepEqual(client.calls, [
    { method: 'restartAlloc', args: [ALLOC, 'web'] },
    { method: 'signalAlloc', args: [ALLOC, undefined, 'SIGUSR1'] },
  ]);
  const missing = await run('alloc', 'restart', 'ffff');
  assert.equal(missing.code, 1);
  assert.match(missing.err, /No allocation with prefix/);
});

test('alloc status shows the task resources with the client-measured usage; -stats adds the measured tables', async () => {
  const plain = await run('alloc', 'status', ALLOC.slice(0, 8));
  assert.equal(plain.code, 0, plain.err);
  assert.match(plain.out, new RegExp(`^ID\\s+= ${ALLOC}$`, 'm'));
  // The fake client measures 12.5 ticks and 1 MiB of RSS for every task.
  assert.match(plain.out, /Task "web" is "running"\nTask Resources:\nCPU\s+Memory\s+Disk\s+Addresses\n12\/\d+ MHz\s+1\.0 MiB\/\d+ MiB/);
  assert.doesNotMatch(plain.out, /Memory Stats/);
  const stats = await run('alloc', 'status', '-stats', ALLOC);
  assert.equal(stats.code, 0, stats.err);
  assert.match(stats.out, /Memory Stats\nRSS\n1\.0 MiB\n\nCPU Stats\nPercent\s+Total Ticks\n1\.50%\s+12\n/);
  const short = await run('alloc', 'status', '-short', ALLOC);
  assert.match(short.out, /Tasks\nName\s+State\s+Last Event\s+Time\s+Lifecycle\nweb\s+running/);
});
