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
  try {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await pool.fetch(`${base}/v1/x?index=3`);
    assert.equal(res.status, 404);
    assert.equal(res.ok, false);
    assert.equal(res.headers.get('x-nomad-index'), '42');
    assert.deepEqual(await res.json(), { Allocs: { a: 1 } });
    assert.equal(res.bodyUsed, true);
    await assert.rejects(res.text(), TypeError);
    const empty = await pool.fetch(`${base}/empty`, { method: 'PUT', body: '{}' });
    assert.equal(empty.status, 204);
    assert.equal(await empty.text(), '');
  } finally {
    pool.destroy();
    await new Promise((r) => server.close(r));
  }
});
