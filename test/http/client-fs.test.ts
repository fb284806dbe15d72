import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/http/http-server.js';
import { allocOnNode, startServer } from './real-server.js';
import { FakeAllocClient, startAgent } from './client-harness.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

const ALLOC = 'bbbbbbbb-1111-2222-3333-444444444444';
let client: FakeAllocClient;
let app: FastifyInstance;
let outside: string;

before(() => {
  client = new FakeAllocClient();
  const dir = client.addAlloc(ALLOC, ['web']);
  writeFileSync(join(dir, 'web', 'local', 'config.txt'), 'hello config\n');
  writeFileSync(join(dir, 'web', 'local', 'bin.dat'), Buffer.from([0, 1, 2, 3]));
  mkdirSync(join(dir, 'web', 'local', 'sub'));
  outside = mkdtempSync(join(tmpdir(), 'caravan-outside-'));
  writeFileSync(join(outside, 'secret'), 'top secret');
  symlinkSync(join(outside, 'secret'), join(dir, 'web', 'local', 'escape'));
  symlinkSync(outside, join(dir, 'web', 'local', 'escape-dir'));
  symlinkSync('config.txt', join(dir, 'web', 'local', 'inside-link'));
  app = createHttpServer({ client });
});
after(async () => {
  await app.close();
  client.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

test('ls lists a directory with Nomad AllocFileInfo fields, sorted by name', async () => {
  const res = await app.inject({ url: `/v1/client/fs/ls/${ALLOC}?path=/web/local` });
  assert.equal(res.statusCode, 200);
  const list = res.json() as { Name: string; IsDir: boolean; Size: number; FileMode: string; ModTime: string; ContentType: string }[];
  assert.deepEqual(list.map((f) => f.Name), ['bin.dat', 'config.txt', 'escape', 'escape-dir', 'inside-link', 'sub']);
  const cfg = list.find((f) => f.Name === 'config.txt')!;
  assert.equal(cfg.IsDir, false);
  assert.equal(cfg.Size, 13);
  assert.match(cfg.FileMode, /^-rw/);
  assert.ok(!Number.isNaN(Date.parse(cfg.ModTime)));
  assert.equal(cfg.ContentType, 'text/plain; charset=utf-8');
  assert.equal(list.find((f) => f.Name === 'bin.dat')!.ContentType, 'application/octet-stream');
  const sub = list.find((f) => f.Name === 'sub')!;
  assert.equal(sub.IsDir, true);
  assert.match(sub.FileMode, /^d/);
  assert.match(list.find((f) => f.Name === 'escape')!.FileMode, /^L/);
  const root = await app.inject({ url: `/v1/client/fs/ls/${ALLOC}` });
  assert.deepEqual((root.json() as { Name: string }[]).map((f) => f.Name), ['alloc', 'web']);
});

test('stat, cat and readat read files inside the allocation', async () => {
  const st = await app.inject({ url: `/v1/client/fs/stat/${ALLOC}?path=web/local/config.txt` });
  assert.equal(st.statusCode, 200);
  assert.equal((st.json() as { Name: string; Size: number }).Name, 'config.txt');
  const cat = await app.inject({ url: `/v1/client/fs/cat/${ALLOC}?path=/web/local/config.txt` });
  assert.equal(cat.statusCode, 200);
  assert.equal(cat.body, 'hello config\n');
  const link = await app.inject({ url: `/v1/client/fs/cat/${ALLOC}?path=/web/local/inside-link` });
  assert.equal(link.body, 'hello config\n');
  const readat = await app.inject({ url: `/v1/client/fs/readat/${ALLOC}?path=/web/local/config.txt&offset=6&limit=6` });
  assert.equal(readat.body, 'config');
  const tail = await app.inject({ url: `/v1/client/fs/readat/${ALLOC}?path=/web/local/config.txt&offset=6` });
  assert.equal(tail.body, 'config\n');
  const past = await app.inject({ url: `/v1/client/fs/readat/${ALLOC}?path=/web/local/config.txt&offset=100` });
  assert.equal(past.body, '');
});

test('paths that escape the allocation directory are refused', async () => {
  const cases = [
    { name: 'dot-dot', path: '../../../etc/passwd', status: 403 },
    { name: 'rooted dot-dot', path: '/web/../../etc/passwd', status: 403 },
    { name: 'encoded dot-dot', path: '%2E%2E/%2E%2E/etc', status: 403 },
    { name: 'symlink to a file outside', path: '/web/local/escape', status: 403 },
    { name: 'symlink to a dir outside', path: '/web/local/escape-dir/secret', status: 403 },
    { name: 'NUL byte', path: 'web/local/config.txt%00', status: 400 },
  ];
  for (const route of ['cat', 'stat', 'ls', 'readat', 'stream']) {
    for (const c of cases) {
      const res = await app.inject({ url: `/v1/client/fs/${route}/${ALLOC}?path=${c.path}` });
      assert.equal(res.statusCode, c.status, `${route} ${c.name}: ${res.body}`);
      assert.ok(!res.body.includes('top secret'), `${route} ${c.name} leaked the file`);
      assert.match(res.body, /path/, `${route} ${c.name}`);
    }
  }
});

test('a leading slash means the allocation root, so absolute host paths are not reachable', async () => {
  const res = await app.inject({ url: `/v1/client/fs/cat/${ALLOC}?path=${encodeURIComponent(join(outside, 'secret'))}` });
  assert.equal(res.statusCode, 404);
});

test('missing files are 404, directories are not files, bad parameters are 400', async () => {
  assert.equal((await app.inject({ url: `/v1/client/fs/cat/${ALLOC}?path=/nope` })).statusCode, 404);
  assert.equal((await app.inject({ url: `/v1/client/fs/cat/nope?path=/` })).statusCode, 404);
  const dir = await app.inject({ url: `/v1/client/fs/cat/${ALLOC}?path=/web` });
  assert.equal(dir.statusCode, 400);
  assert.match(dir.body, /directory/);
  const notDir = await app.inject({ url: `/v1/client/fs/ls/${ALLOC}?path=/web/local/config.txt` });
  assert.equal(notDir.statusCode, 400);
  const badOffset = await app.inject({ url: `/v1/client/fs/readat/${ALLOC}?path=/web/local/config.txt&offset=x` });
  assert.equal(badOffset.statusCode, 400);
  assert.match(badOffset.body, /"offset"/);
  const badOrigin = await app.inject({ url: `/v1/client/fs/stream/${ALLOC}?path=/web/local/config.txt&origin=middle` });
  assert.equal(badOrigin.statusCode, 400);
  assert.match(badOrigin.body, /"origin"/);
});

test('stream without follow sends StreamFrames and ends', async () => {
  const res = await app.inject({ url: `/v1/client/fs/stream/${ALLOC}?path=/web/local/config.txt&follow=false&offset=6` });
  assert.equal(res.statusCode, 200);
  assert.doesNotMatch(res.body, /}\s+{/, 'frames are written back to back, as Nomad');
  const frames = new JsonFrameDecoder().pushParsed<{ Offset: number; Data: string; File: string }>(res.body);
  const data = frames.filter((f) => f.Data).map((f) => Buffer.from(f.Data, 'base64').toString()).join('');
  assert.equal(data, 'config\n');
  assert.equal(frames.at(-1)!.File, 'web/local/config.txt');
  assert.equal(frames.at(-1)!.Offset, 13);
  const plain = await app.inject({ url: `/v1/client/fs/stream/${ALLOC}?path=/web/local/config.txt&follow=false&plain=true&origin=end&offset=7` });
  assert.equal(plain.body, 'config\n');
});

test('a server without the allocation forwards fs requests to the client holding it', async () => {
  const direct = await startAgent({ client });
  const front = await startServer();
  try {
    const id = await allocOnNode(front.server, 'node-client', direct.hostPort);
    client.aliasAlloc(ALLOC, id);
    const cat = await front.app.inject({ url: `/v1/client/fs/cat/${id}?path=/web/local/config.txt` });
    assert.equal(cat.statusCode, 200);
    assert.equal(cat.body, 'hello config\n');
    const escape = await front.app.inject({ url: `/v1/client/fs/cat/${id}?path=../x` });
    assert.equal(escape.statusCode, 403);
    const unknown = await front.app.inject({ url: `/v1/client/fs/cat/other?path=/` });
    assert.equal(unknown.statusCode, 404);
  } finally {
    await front.close();
    await direct.close();
  }
});
