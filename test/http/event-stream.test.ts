import { test } from 'node:test';
import assert from 'node:assert/strict';
import fastify from 'fastify';
import { EventBroker } from '../../src/server/events/event-broker.js';
import type { StreamEvent } from '../../src/server/events/event.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { parseSubscribeRequest, parseTopics, streamEvents } from '../../src/http/routes/event-stream.js';
import { FakeServerApi, mockAlloc, mockJob } from './fake-server-api.js';
import { streamingGet, until } from './client-harness.js';

function jobEvent(index: number, id: string): StreamEvent {
  return { Topic: 'Job', Type: 'JobRegistered', Key: id, Namespace: 'default', FilterKeys: null, Index: index, Payload: { Job: mockJob({ ID: id }) } };
}
function allocEvent(index: number, id: string, jobId: string): StreamEvent {
  return { Topic: 'Allocation', Type: 'AllocationUpdated', Key: id, Namespace: 'default', FilterKeys: [jobId], Index: index, Payload: { Allocation: mockAlloc({ ID: id }) } };
}

test('topics parse as Topic:Key with a wildcard default, and bad ones are a 400 naming "topic"', () => {
  assert.equal(parseTopics(undefined), undefined);
  assert.deepEqual([...parseTopics(['Job:*', 'Allocation:abc', 'Allocation:def', 'Node'])!], [
    ['Job', ['*']],
    ['Allocation', ['abc', 'def']],
    ['Node', ['*']],
  ]);
  assert.throws(() => parseTopics('Job:a:b'), /"topic"/);
  assert.throws(() => parseTopics(':x'), /"topic"/);
  assert.throws(() => parseSubscribeRequest({ index: 'x' }), /"index"/);
  assert.deepEqual(parseSubscribeRequest({ index: '5' }), { index: 5, namespace: 'default' });
});

async function withStream(query: string, fn: (body: () => string, broker: EventBroker) => Promise<void>): Promise<void> {
  const broker = new EventBroker();
  const server = Object.assign(new FakeServerApi(), { eventBroker: broker });
  const app = createHttpServer({ server });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address() as { port: number };
  broker.publish(1, [jobEvent(1, 'old')]);
  const res = streamingGet(`http://127.0.0.1:${addr.port}/v1/event/stream${query}`);
  try {
    assert.equal(await res.status, 200);
    await fn(res.body, broker);
    res.close();
    await until(() => broker.subscriberCount() === 0);
  } finally {
    res.close();
    await app.close();
  }
}

function batches(body: string): { Index?: number; Events?: StreamEvent[] }[] {
  return body.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { Index?: number; Events?: StreamEvent[] });
}

test('the stream replays from the index, then follows, one JSON object per line; disconnect unsubscribes', async () => {
  await withStream('?index=0', async (body, broker) => {
    await until(() => batches(body()).length >= 1);
    broker.publish(2, [jobEvent(2, 'web'), allocEvent(2, 'a1', 'web')]);
    await until(() => batches(body()).length >= 2);
    const bs = batches(body());
    assert.deepEqual(bs.map((b) => b.Index), [1, 2]);
    assert.deepEqual(bs[1]!.Events!.map((e) => e.Type), ['JobRegistered', 'AllocationUpdated']);
    assert.equal(broker.subscriberCount(), 1);
  });
});

test('topic filters select events by topic and key (or filter key)', async () => {
  await withStream('?index=1&topic=Allocation:web', async (body, broker) => {
    broker.publish(2, [jobEvent(2, 'web'), allocEvent(2, 'a1', 'web'), allocEvent(2, 'a2', 'other')]);
    broker.publish(3, [jobEvent(3, 'x')]);
    broker.publish(4, [allocEvent(4, 'a3', 'web')]);
    await until(() => batches(body()).length >= 2);
    const bs = batches(body());
    assert.deepEqual(bs.map((b) => [b.Index, b.Events!.map((e) => e.Key)]), [[2, ['a1']], [4, ['a3']]]);
  });
});

test('an idle stream sends {} heartbeats', async () => {
  const broker = new EventBroker();
  const app = fastify();
  app.get('/s', (req, reply) => streamEvents(req, reply, broker, { index: 0 }, 20));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address() as { port: number };
  const res = streamingGet(`http://127.0.0.1:${addr.port}/s`);
  try {
    await until(() => res.body().startsWith('{}\n{}\n'));
  } finally {
    res.close();
    await app.close();
  }
});

test('bad stream requests are 400; a client-only agent has no event stream', async () => {
  const server = Object.assign(new FakeServerApi(), { eventBroker: new EventBroker() });
  const app = createHttpServer({ server });
  const bad = await app.inject({ url: '/v1/event/stream?topic=a:b:c' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /"topic"/);
  const noServer = createHttpServer({});
  assert.equal((await noServer.inject({ url: '/v1/event/stream' })).statusCode, 400);
  await app.close();
  await noServer.close();
});
