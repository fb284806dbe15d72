import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeAllocClient, startAgent, streamingGet, until, type RunningAgent } from './client-harness.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

const ALLOC = 'cccccccc-1111-2222-3333-444444444444';
let client: FakeAllocClient;
let agent: RunningAgent;
let logDir: string;

interface Frame {
  Offset?: number;
  Data?: string;
  File?: string;
  FileEvent?: string;
}

/** Decodes a framed body, checking it is framed as Nomad's: objects back to back, nothing between. */
function frames(body: string): Frame[] {
  assert.doesNotMatch(body, /}\s+{/, 'frames are written back to back');
  const decoder = new JsonFrameDecoder();
  const out = decoder.pushParsed<Frame>(body);
  assert.equal(decoder.pending, '', 'the body ends with a whole frame');
  return out;
}

function dataOf(fs: Frame[]): string {
  return fs.map((f) => (f.Data ? Buffer.from(f.Data, 'base64').toString() : '')).join('');
}

before(async () => {
  client = new FakeAllocClient();
  logDir = join(client.addAlloc(ALLOC, ['web', 'api']), 'alloc', 'logs');
  writeFileSync(join(logDir, 'web.stdout.0'), 'first-');
  writeFileSync(join(logDir, 'web.stdout.1'), 'second-');
  writeFileSync(join(logDir, 'web.stdout.2'), 'third');
  writeFileSync(join(logDir, 'web.stderr.0'), 'oops\n');
  writeFileSync(join(logDir, 'webx.stdout.0'), 'not mine');
  agent = await startAgent({ client });
});
after(async () => {
  await agent.close();
  client.cleanup();
});

test('framed logs read the rotated files in order, naming each file and the offset after its data', async () => {
  const res = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stdout` });
  assert.equal(res.statusCode, 200);
  const fs = frames(res.body).filter((f) => f.Data);
  assert.equal(dataOf(fs), 'first-second-third');
  assert.deepEqual(
    fs.map((f) => [f.File, f.Offset]),
    [['alloc/logs/web.stdout.0', 6], ['alloc/logs/web.stdout.1', 7], ['alloc/logs/web.stdout.2', 5]],
  );
  const err = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stderr` });
  assert.equal(dataOf(frames(err.body)), 'oops\n');
});

test('plain logs are raw bytes; offsets count from the start or the end across files', async () => {
  const plain = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stdout&plain=true` });
  assert.equal(plain.body, 'first-second-third');
  const fromStart = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stdout&plain=true&offset=8` });
  assert.equal(fromStart.body, 'cond-third');
  const fromEnd = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stdout&plain=true&origin=end&offset=9` });
  assert.equal(fromEnd.body, 'ond-third');
  const tooFar = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?task=web&type=stdout&plain=true&origin=end&offset=1000` });
  assert.equal(tooFar.body, 'first-second-third');
});

test('bad log requests are 4xx naming the parameter', async () => {
  const cases = [
    { q: 'type=stdout', field: /"task"/, status: 400 },
    { q: 'task=web', field: /"type"/, status: 400 },
    { q: 'task=web&type=stdin', field: /"type"/, status: 400 },
    { q: 'task=web&type=stdout&offset=-1', field: /"offset"/, status: 400 },
    { q: 'task=web&type=stdout&origin=nowhere', field: /"origin"/, status: 400 },
    { q: 'task=web&type=stdout&follow=perhaps', field: /"follow"/, status: 400 },
    { q: 'task=../../x&type=stdout', field: /"task"/, status: 400 },
    { q: 'task=db&type=stdout', field: /task "db"/, status: 404 },
  ];
  for (const c of cases) {
    const res = await agent.app.inject({ url: `/v1/client/fs/logs/${ALLOC}?${c.q}` });
    assert.equal(res.statusCode, c.status, c.q);
    assert.match(res.body, c.field, c.q);
  }
  assert.equal((await agent.app.inject({ url: `/v1/client/fs/logs/unknown?task=web&type=stdout` })).statusCode, 404);
});

test('follow streams appended data and moves on to the next rotated file', async () => {
  const res = streamingGet(`${agent.baseUrl}/v1/client/fs/logs/${ALLOC}?task=api&type=stdout&follow=true`);
  assert.equal(await res.status, 200);
  const body = () => res.body();
  // The task has not written anything yet: the stream waits for its first file.
  writeFileSync(join(logDir, 'api.stdout.0'), 'line1\n');
  await until(() => dataOf(frames(body())).includes('line1\n'));
  appendFileSync(join(logDir, 'api.stdout.0'), 'line2\n');
  await until(() => dataOf(frames(body())).includes('line2\n'));
  // Rotation: the writer opens the next index.
  appendFileSync(join(logDir, 'api.stdout.0'), 'last-of-0\n');
  writeFileSync(join(logDir, 'api.stdout.1'), 'line3\n');
  await until(() => dataOf(frames(body())).includes('line3\n'));
  res.close();
  const fs = frames(body()).filter((f) => f.Data);
  assert.equal(dataOf(fs), 'line1\nline2\nlast-of-0\nline3\n');
  assert.equal(fs.at(-1)!.File, 'alloc/logs/api.stdout.1');
});

test('follow in plain mode survives the oldest file being removed by rotation', async () => {
  writeFileSync(join(logDir, 'api.stderr.3'), 'a');
  const res = streamingGet(`${agent.baseUrl}/v1/client/fs/logs/${ALLOC}?task=api&type=stderr&follow=true&plain=true`);
  const body = () => res.body();
  await until(() => body() === 'a');
  writeFileSync(join(logDir, 'api.stderr.4'), 'b');
  renameSync(join(logDir, 'api.stderr.3'), join(logDir, 'old'));
  await until(() => body() === 'ab');
  appendFileSync(join(logDir, 'api.stderr.4'), 'c');
  await until(() => body() === 'abc');
  res.close();
});
