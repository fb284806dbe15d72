import { test } from 'node:test';
import { get as httpGet } from 'node:http';
import assert from 'node:assert/strict';
import { parseQueryOptions, DEFAULT_WAIT_MS, MAX_WAIT_MS, tokenFromHeaders } from '../../src/http/query-options.js';
import { Table } from '../../src/server/state/state-reader.js';
import { mockNode } from '../mock/factories.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from './real-server.js';

test('parseQueryOptions: wait as a Go duration, default 5m, capped at 10m', () => {
  const rows = [
    { name: 'default', q: {}, want: DEFAULT_WAIT_MS },
    { name: '30s', q: { wait: '30s' }, want: 30_000 },
    { name: '1m30s', q: { wait: '1m30s' }, want: 90_000 },
    { name: 'capped', q: { wait: '1h' }, want: MAX_WAIT_MS },
  ];
  for (const r of rows) assert.equal(parseQueryOptions(r.q, {}).waitMs, r.want, r.name);
  assert.equal(parseQueryOptions({ index: '42' }, {}).index, 42);
  assert.equal(parseQueryOptions({}, {}).namespace, 'default');
  assert.throws(() => parseQueryOptions({ index: '-1' }, {}), /"index"/);
  assert.throws(() => parseQueryOptions({ wait: '5 minutes' }, {}), /"wait"/);
});

test('tokenFromHeaders prefers X-Nomad-Token, accepts Bearer', () => {
  assert.equal(tokenFromHeaders({ 'x-nomad-token': 't1', authorization: 'Bearer t2' }), 't1');
  assert.equal(tokenFromHeaders({ authorization: 'Bearer t2' }), 't2');
  assert.equal(tokenFromHeaders({ authorization: 'Basic xyz' }), '');
});

/** A real server holding job "a", placed, so nothing else moves the jobs table. */
async function withJobA(): Promise<ServerUnderTest> {
  const sut = await startServer({ random: () => 0 });
  await placeJob(sut.server, serviceJob('a'));
  return sut;
}

test('a blocking query waits until the index moves, then answers the new state', async () => {
  const sut = await withJobA();
  try {
    const first = await sut.app.inject({ url: '/v1/jobs' });
    const index = Number(first.headers['x-nomad-index']);
    let settled = false;
    const pending = sut.app.inject({ url: `/v1/jobs?index=${index}&wait=5m` }).then((r) => {
      settled = true;
      return r;
    });
    // Let the request reach the wait; an unrelated table change must not wake it.
    await new Promise((r) => setImmediate(r));
    const nodesBefore = sut.server.state.tableIndex(Table.Nodes);
    await sut.server.registerNode(mockNode({ Datacenter: 'dc9' }));
    assert.ok(sut.server.state.tableIndex(Table.Nodes) > nodesBefore, 'the nodes table moved');
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, 'returned before the jobs table changed');
    await sut.server.registerJob(serviceJob('b'));
    const res = await pending;
    assert.equal(res.statusCode, 200);
    assert.ok(Number(res.headers['x-nomad-index']) > index);
    assert.deepEqual(res.json<{ ID: string }[]>().map((j) => j.ID).sort(), ['a', 'b']);
  } finally {
    await sut.close();
  }
});

test('a blocking query with an old index answers at once', async () => {
  const sut = await withJobA();
  try {
    const res = await sut.app.inject({ url: '/v1/jobs?index=1&wait=10m' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json<unknown[]>().length, 1);
  } finally {
    await sut.close();
  }
});

test('a blocking query times out after its wait with the unchanged index', async () => {
  const sut = await withJobA();
  try {
    const index = Math.max(sut.server.state.tableIndex(Table.Jobs), sut.server.state.tableIndex(Table.JobSummaries));
    const res = await sut.app.inject({ url: `/v1/jobs?index=${index}&wait=20ms` });
    assert.equal(res.statusCode, 200);
    assert.equal(Number(res.headers['x-nomad-index']), index);
  } finally {
    await sut.close();
  }
});

test('closing the server answers blocked queries at once instead of holding shutdown', async () => {
  const sut = await withJobA();
  await sut.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = sut.app.server.address() as { port: number };
  const index = Math.max(sut.server.state.tableIndex(Table.Jobs), sut.server.state.tableIndex(Table.JobSummaries));
  // node:http, whose socket reports its close whatever the moment the server drops it.
  const pending = new Promise<number | 'closed'>((resolve) => {
    const req = httpGet(`http://127.0.0.1:${addr.port}/v1/jobs?index=${index}&wait=10m`, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve('closed'));
    req.on('close', () => resolve('closed'));
  });
  await new Promise((r) => setTimeout(r, 50));
  await sut.close();
  const outcome = await pending;
  assert.ok(outcome === 200 || outcome === 'closed', String(outcome));
});
