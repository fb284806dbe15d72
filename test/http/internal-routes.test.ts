import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpServer } from '../../src/http/http-server.js';
import { FakeServerApi, mockAlloc, mockNode } from './fake-server-api.js';

test('node register and heartbeat answer the TTL in nanoseconds', async () => {
  const server = new FakeServerApi();
  const app = createHttpServer({ server });
  const node = mockNode({ ID: 'n1' });
  const reg = await app.inject({ method: 'PUT', url: '/v1/internal/node/register', payload: { Node: node } });
  assert.equal(reg.statusCode, 200, reg.body);
  assert.equal(reg.json<{ HeartbeatTTL: number }>().HeartbeatTTL, 10_000_000_000);
  const hb = await app.inject({ method: 'PUT', url: '/v1/internal/node/n1/heartbeat', payload: { Status: 'ready' } });
  assert.equal(hb.statusCode, 200, hb.body);
  const unknown = await app.inject({ method: 'PUT', url: '/v1/internal/node/zzz/heartbeat', payload: { Status: 'ready' } });
  assert.equal(unknown.statusCode, 404);
});

test('internal endpoints reject bad bodies naming the field', async () => {
  const server = new FakeServerApi();
  const app = createHttpServer({ server });
  const rows = [
    { name: 'no Node', url: '/v1/internal/node/register', payload: {}, want: /Node must be specified/ },
    { name: 'no Node.ID', url: '/v1/internal/node/register', payload: { Node: { Name: 'x' } }, want: /Node\.ID/ },
    { name: 'bad status', url: '/v1/internal/node/n1/heartbeat', payload: { Status: 'sleepy' }, want: /Status "sleepy"/ },
    { name: 'no Allocs', url: '/v1/internal/allocs/update', payload: {}, want: /Allocs must be specified/ },
    { name: 'bad alloc status', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'weird' }] }, want: /Allocs\[0\]\.ClientStatus/ },
  ];
  for (const r of rows) {
    const res = await app.inject({ method: 'PUT', url: r.url, payload: r.payload });
    assert.equal(res.statusCode, 400, r.name);
    assert.match(res.body, r.want, r.name);
  }
  assert.equal(server.calls.length, 0);
});

test('alloc updates from clients are applied', async () => {
  const server = new FakeServerApi();
  server.putAlloc(mockAlloc());
  const app = createHttpServer({ server });
  const res = await app.inject({
    method: 'PUT',
    url: '/v1/internal/allocs/update',
    payload: { Allocs: [{ ID: 'aaaaaaaa-0000-0000-0000-000000000001', NodeID: 'n', ClientStatus: 'running', TaskStates: {} }] },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(server.allocsById.get('aaaaaaaa-0000-0000-0000-000000000001')!.ClientStatus, 'running');
});
