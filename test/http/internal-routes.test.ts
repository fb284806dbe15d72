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
    { name: 'node without resources', url: '/v1/internal/node/register', payload: { Node: { ...mockNode({ ID: 'n2' }), NodeResources: null } }, want: /Node\.NodeResources must be a JSON object/ },
    { name: 'node cpu not a number', url: '/v1/internal/node/register', payload: { Node: { ...mockNode({ ID: 'n2' }), NodeResources: { Cpu: { CpuShares: 'lots' }, Memory: { MemoryMB: 1 }, Disk: { DiskMB: 1 } } } }, want: /Node\.NodeResources\.Cpu\.CpuShares/ },
    { name: 'node attribute not a string', url: '/v1/internal/node/register', payload: { Node: { ...mockNode({ ID: 'n2' }), Attributes: { 'cpu.numcores': 2 } } }, want: /Node\.Attributes\["cpu\.numcores"\]/ },
    { name: 'null task state', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', TaskStates: { web: null } }] }, want: /Allocs\[0\]\.TaskStates\.web must be a JSON object/ },
    { name: 'bad task state name', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', TaskStates: { web: { State: 'napping' } } }] }, want: /TaskStates\.web\.State "napping"/ },
    { name: 'events not an array', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', TaskStates: { web: { State: 'running', Events: {} } } }] }, want: /TaskStates\.web\.Events must be an array/ },
    { name: 'bad deployment health', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', DeploymentStatus: { Healthy: 'yes' } }] }, want: /DeploymentStatus\.Healthy/ },
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
