/**
 * The node simulator's fetch (bench/nodesim/pooled-fetch.ts) answers what the clients' HTTP
 * connection reads — status, headers, the body once as text or JSON — from a buffered body,
 * without a web Response per answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pooledFetch } from '../../bench/nodesim/pooled-fetch.js';

test('pooled fetch: status, headers and the body (once) of a buffered answer; 204 has none', async () => {
  const server = createServer((req, res) => {
    if (req.url === '/empty') {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(404, { 'X-Nomad-Index': '42', 'content-type': 'application/json' }).end(JSON.stringify({ Allocs: { a: 1 } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const pool = pooledFetch();
  const fetchOf = pool.forNode();
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await fetchOf(`${base}/v1/x?index=3`);
    assert.equal(res.status, 404);
    assert.equal(res.ok, false);
    assert.equal(res.headers.get('x-nomad-index'), '42');
    assert.deepEqual(await res.json(), { Allocs: { a: 1 } });
    assert.equal(res.bodyUsed, true);
    await assert.rejects(res.text(), TypeError);
    const empty = await fetchOf(`${base}/empty`, { method: 'PUT', body: '{}' });
    assert.equal(empty.status, 204);
    assert.equal(await empty.text(), '');
  } finally {
    pool.destroy();
    await new Promise((r) => server.close(r));
  }
});

test("pooled fetch: each node holds its blocking query on its own connection, kept alive between its queries; requests are counted by kind", async () => {
  // Which client socket each held query arrived on (the server sees the client's port).
  const heldOn: string[] = [];
  const server = createServer((req, res) => {
    if (req.url?.includes('index=')) heldOn.push(`${req.url.split('/')[4]}:${req.socket.remotePort}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const pool = pooledFetch();
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const a = pool.forNode();
    const b = pool.forNode();
    for (let i = 1; i <= 3; i++) {
      await (await a(`${base}/v1/internal/node/a/client-allocs?index=${i}&wait=1s`)).text();
      await (await b(`${base}/v1/internal/node/b/client-allocs?index=${i}&wait=1s`)).text();
    }
    await (await a(`${base}/v1/internal/node/a/heartbeat`, { method: 'PUT', body: '{}' })).text();
    await (await a(`${base}/v1/internal/allocs/update`, { method: 'PUT', body: '{}' })).text();
    await (await a(`${base}/v1/internal/node/a/allocs`, { method: 'PUT', body: '{}' })).text();
    const portsOf = (node: string) => new Set(heldOn.filter((h) => h.startsWith(`${node}:`)).map((h) => h.split(':')[1]));
    assert.equal(heldOn.length, 6);
    assert.equal(portsOf('a').size, 1, "node a's queries reuse its one connection");
    assert.equal(portsOf('b').size, 1, "node b's queries reuse its one connection");
    assert.notDeepEqual([...portsOf('a')], [...portsOf('b')], 'two nodes never share a held connection');
    const st = pool.stats();
    assert.equal(st.blockingSockets, 2);
    assert.deepEqual(st.requests, { register: 0, heartbeat: 1, watch: 6, fetchAllocs: 1, allocUpdates: 1, hostVolumes: 0, other: 0 });
  } finally {
    pool.destroy();
    await new Promise((r) => server.close(r));
  }
});

test('pooled fetch: the shared pool holds at most maxSockets requests at the server, the rest wait in order; an abort while waiting fails at once', async () => {
  let atServer = 0;
  let most = 0;
  const order: string[] = [];
  const server = createServer((req, res) => {
    atServer++;
    most = Math.max(most, atServer);
    order.push(req.url!.split('=')[1]!);
    setTimeout(() => {
      atServer--;
      res.writeHead(200).end('{}');
    }, 5);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const pool = pooledFetch({ maxSockets: 2 });
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const f = pool.forNode();
    const ctl = new AbortController();
    const sends = Array.from({ length: 20 }, (_, i) => f(`${base}/v1/internal/allocs/update?n=${i}`, { method: 'PUT', body: '{}', ...(i === 10 ? { signal: ctl.signal } : {}) }));
    assert.equal(pool.stats().queued >= 17, true, 'the rest wait for a socket');
    ctl.abort();
    await assert.rejects(sends[10]!);
    const done = await Promise.allSettled(sends);
    assert.equal(done.filter((d) => d.status === 'fulfilled').length, 19);
    assert.equal(most, 2);
    assert.deepEqual(order, Array.from({ length: 20 }, (_, i) => String(i)).filter((i) => i !== '10'), 'in arrival order, the aborted one never sent');
    assert.equal(pool.stats().queued, 0);
  } finally {
    pool.destroy();
    await new Promise((r) => server.close(r));
  }
});
