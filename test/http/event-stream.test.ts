import { test } from 'node:test';
import assert from 'node:assert/strict';
import fastify from 'fastify';
import { EventBroker } from '../../src/server/events/event-broker.js';
import type { StreamEvent } from '../../src/server/events/event.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { parseSubscribeRequest, parseTopics, streamEvents } from '../../src/http/routes/event-stream.js';
import type { Server } from '../../src/server/server.js';
import { streamingGet, until } from './client-harness.js';
import { placeJob, serviceJob, startServer } from './real-server.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

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

/** Streams /v1/event/stream`query` from a real server (job "old" registered before subscribing). */
async function withStream(query: string, fn: (body: () => string, server: Server) => Promise<void>): Promise<void> {
  const sut = await startServer();
  await sut.server.registerJob(serviceJob('old'));
  await sut.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = sut.app.server.address() as { port: number };
  const res = streamingGet(`http://127.0.0.1:${addr.port}/v1/event/stream${query}`);
  try {
    assert.equal(await res.status, 200);
    await fn(res.body, sut.server);
    res.close();
    await until(() => sut.server.eventBroker.subscriberCount() === 0);
  } finally {
    res.close();
    await sut.close();
  }
}

/** The batches of a stream's body (heartbeats left out), checking they are framed back to back as Nomad's. */
function batches(body: string): { Index?: number; Events?: StreamEvent[] }[] {
  assert.doesNotMatch(body, /}\s+{/, 'frames are written back to back');
  return new JsonFrameDecoder().push(body).filter((f) => f !== '{}').map((f) => JSON.parse(f) as { Index?: number; Events?: StreamEvent[] });
}

const jobRegistrations = (body: string) =>
  batches(body).flatMap((b) => (b.Events ?? []).filter((e) => e.Type === 'JobRegistered').map((e) => [b.Index, e.Key] as const));

test('the stream replays from the index, then follows, one JSON object per line; disconnect unsubscribes', async () => {
  await withStream('?index=0', async (body, server) => {
    await until(() => jobRegistrations(body()).length >= 1);
    await server.registerJob(serviceJob('web'));
    await until(() => jobRegistrations(body()).length >= 2);
    const regs = jobRegistrations(body());
    assert.deepEqual(regs.map(([, key]) => key), ['old', 'web']);
    assert.ok(regs[0]![0]! < regs[1]![0]!, 'in index order');
    const indexes = batches(body()).map((b) => b.Index!);
    assert.deepEqual(indexes, [...indexes].sort((a, b) => a - b), 'batches in index order');
    assert.equal(server.eventBroker.subscriberCount(), 1);
  });
});

test('topic filters select events by topic and key (or filter key)', async () => {
  await withStream('?index=1&topic=Allocation:fweb', async (body, server) => {
    await placeJob(server, serviceJob('fweb', 2));
    await placeJob(server, serviceJob('other', 1));
    await until(() => batches(body()).flatMap((b) => b.Events ?? []).length >= 2);
    const events = batches(body()).flatMap((b) => b.Events ?? []);
    assert.ok(events.every((e) => e.Topic === 'Allocation' && e.FilterKeys?.includes('fweb')), JSON.stringify(events.map((e) => [e.Topic, e.Key])));
    assert.deepEqual(new Set(events.map((e) => e.Key)), new Set(server.state.allocsByJob('default', 'fweb').map((a) => a.ID)));
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
    // Back to back, as Nomad's heartbeats.
    await until(() => res.body().startsWith('{}{}'));
  } finally {
    res.close();
    await app.close();
  }
});

test('bad stream requests are 400; a client-only agent has no event stream', async () => {
  const sut = await startServer();
  const bad = await sut.app.inject({ url: '/v1/event/stream?topic=a:b:c' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /"topic"/);
  const noServer = createHttpServer({});
  assert.equal((await noServer.inject({ url: '/v1/event/stream' })).statusCode, 400);
  await sut.close();
  await noServer.close();
});
