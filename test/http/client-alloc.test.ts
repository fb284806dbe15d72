import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/http/http-server.js';
import { allocOnNode, startServer } from './real-server.js';
import { FakeAllocClient, startAgent } from './client-harness.js';

const ALLOC = 'dddddddd-1111-2222-3333-444444444444';
let client: FakeAllocClient;
let app: FastifyInstance;

before(() => {
  client = new FakeAllocClient();
  client.addAlloc(ALLOC, ['web', 'sidecar']);
  app = createHttpServer({ client });
});
after(async () => {
  await app.close();
  client.cleanup();
});

test('restart one task or all of them, with PUT or POST', async () => {
  client.calls.length = 0;
  const one = await app.inject({ method: 'PUT', url: `/v1/client/allocation/${ALLOC}/restart`, payload: { TaskName: 'web' } });
  assert.equal(one.statusCode, 200);
  assert.deepEqual(one.json(), {});
  const all = await app.inject({ method: 'POST', url: `/v1/client/allocation/${ALLOC}/restart`, payload: { AllTasks: true } });
  assert.equal(all.statusCode, 200);
  const none = await app.inject({ method: 'POST', url: `/v1/client/allocation/${ALLOC}/restart` });
  assert.equal(none.statusCode, 200);
  assert.deepEqual(client.calls, [
    { method: 'restartAlloc', args: [ALLOC, 'web'] },
    { method: 'restartAlloc', args: [ALLOC, undefined] },
    { method: 'restartAlloc', args: [ALLOC, undefined] },
  ]);
});

test('restart rejects bad bodies and unknown tasks', async () => {
  const both = await app.inject({ method: 'PUT', url: `/v1/client/allocation/${ALLOC}/restart`, payload: { TaskName: 'web', AllTasks: true } });
  assert.equal(both.statusCode, 400);
  const badType = await app.inject({ method: 'PUT', url: `/v1/client/allocation/${ALLOC}/restart`, payload: { TaskName: 3 } });
  assert.equal(badType.statusCode, 400);
  assert.match(badType.body, /TaskName/);
  const unknown = await app.inject({ method: 'PUT', url: `/v1/client/allocation/${ALLOC}/restart`, payload: { TaskName: 'db' } });
  assert.equal(unknown.statusCode, 404);
  const noAlloc = await app.inject({ method: 'PUT', url: `/v1/client/allocation/zzz/restart` });
  assert.equal(noAlloc.statusCode, 404);
});

test('signal validates the signal name and defaults to SIGKILL', async () => {
  client.calls.length = 0;
  const usr1 = await app.inject({ method: 'POST', url: `/v1/client/allocation/${ALLOC}/signal`, payload: { Task: 'web', Signal: 'usr1' } });
  assert.equal(usr1.statusCode, 200);
  await app.inject({ method: 'PUT', url: `/v1/client/allocation/${ALLOC}/signal`, payload: {} });
  assert.deepEqual(client.calls, [
    { method: 'signalAlloc', args: [ALLOC, 'web', 'SIGUSR1'] },
    { method: 'signalAlloc', args: [ALLOC, undefined, 'SIGKILL'] },
  ]);
  const bad = await app.inject({ method: 'PUT', url: `/v1/client/allocation/${ALLOC}/signal`, payload: { Signal: 'SIGNOPE' } });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /"Signal"/);
});

test('stats answer Nomad AllocResourceUsage, summed over tasks', async () => {
  const res = await app.inject({ url: `/v1/client/allocation/${ALLOC}/stats` });
  assert.equal(res.statusCode, 200);
  const body = res.json() as {
    ResourceUsage: { MemoryStats: { RSS: number }; CpuStats: { Percent: number; TotalTicks: number } };
    Tasks: Record<string, { ResourceUsage: { MemoryStats: { RSS: number } }; Timestamp: number }>;
    Timestamp: number;
  };
  assert.deepEqual(Object.keys(body.Tasks).sort(), ['sidecar', 'web']);
  assert.equal(body.Tasks.web!.ResourceUsage.MemoryStats.RSS, 1024 * 1024);
  assert.equal(body.ResourceUsage.MemoryStats.RSS, 2 * 1024 * 1024);
  assert.equal(body.ResourceUsage.CpuStats.Percent, 3);
  assert.equal(body.ResourceUsage.CpuStats.TotalTicks, 25);
  assert.ok(body.Timestamp > 0);
});

test('a server without the allocation forwards lifecycle requests with their body', async () => {
  const direct = await startAgent({ client });
  const front = await startServer();
  try {
    const id = await allocOnNode(front.server, 'node-client', direct.hostPort);
    client.aliasAlloc(ALLOC, id);
    client.calls.length = 0;
    const res = await front.app.inject({ method: 'PUT', url: `/v1/client/allocation/${id}/signal`, payload: { Task: 'sidecar', Signal: 'SIGHUP' } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(client.calls, [{ method: 'signalAlloc', args: [id, 'sidecar', 'SIGHUP'] }]);
    const stats = await front.app.inject({ url: `/v1/client/allocation/${id}/stats` });
    assert.equal(stats.statusCode, 200);
    assert.ok((stats.json() as { Tasks: object }).Tasks);
  } finally {
    await front.close();
    await direct.close();
  }
});

test('forwarding to an unreachable client is a 502 naming the node', async () => {
  const front = await startServer();
  try {
    const id = await allocOnNode(front.server, 'gone', '127.0.0.1:1');
    const res = await front.app.inject({ url: `/v1/client/allocation/${id}/stats` });
    assert.equal(res.statusCode, 502);
    assert.match(res.body, /node gone/);
  } finally {
    await front.close();
  }
});
