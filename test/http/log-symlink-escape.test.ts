// Issue 17 item 12: a task that swaps its log file (or log directory) for a symlink must not get
// the logs endpoint to serve a host file.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAllocClient, startAgent, type RunningAgent } from './client-harness.js';

const ALLOC = 'dddddddd-1111-2222-3333-444444444444';
let client: FakeAllocClient;
let agent: RunningAgent;
let allocDir: string;
let hostDir: string;

before(async () => {
  client = new FakeAllocClient();
  allocDir = client.addAlloc(ALLOC, ['web', 'api']);
  hostDir = mkdtempSync(join(tmpdir(), 'caravan-host-'));
  writeFileSync(join(hostDir, 'shadow'), 'root:HOST-SECRET\n');
  writeFileSync(join(hostDir, 'web.stdout.0'), 'HOST-SECRET-IN-DIR\n');
  const logDir = join(allocDir, 'alloc', 'logs');
  symlinkSync(join(hostDir, 'shadow'), join(logDir, 'web.stderr.0'));
  writeFileSync(join(logDir, 'api.stdout.0'), 'fine\n');
  agent = await startAgent({ client });
});
after(async () => {
  await agent.close();
  client.cleanup();
  rmSync(hostDir, { recursive: true, force: true });
});

test('the logs endpoint refuses a log file that is a symlink (403), never serving its target', async () => {
  for (const plain of ['true', 'false']) {
    const res = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stderr&plain=${plain}` });
    assert.equal(res.statusCode, 403, res.body);
    assert.doesNotMatch(res.body, /HOST-SECRET/);
    assert.doesNotMatch(Buffer.from(res.body).toString(), /SE9TVC1TRUNSRV/); // base64 of the secret in a frame
  }
  const ok = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=api&type=stdout&plain=true` });
  assert.equal(ok.body, 'fine\n');
});

test('a log directory swapped for a symlink to a host directory serves nothing from it', async () => {
  const shared = join(allocDir, 'alloc');
  rmSync(join(shared, 'logs'), { recursive: true });
  symlinkSync(hostDir, join(shared, 'logs'));
  try {
    const res = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stdout&plain=true` });
    assert.equal(res.statusCode, 403, res.body);
    assert.doesNotMatch(res.body, /HOST-SECRET/);
  } finally {
    rmSync(join(shared, 'logs'));
    mkdirSync(join(shared, 'logs'));
  }
});

test('fs cat/readat/stream refuse a file swapped for a symlink outside the allocation', async () => {
  symlinkSync(join(hostDir, 'shadow'), join(allocDir, 'alloc', 'data-link'));
  for (const kind of ['cat', 'readat', 'stream']) {
    const res = await agent.app.inject({ url: `/v1/client/fs/${kind}/${ALLOC}?path=alloc/data-link&offset=0&limit=100&follow=false` });
    assert.equal(res.statusCode, 403, `${kind}: ${res.body}`);
    assert.doesNotMatch(res.body, /HOST-SECRET/);
  }
});
