import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import fastify from 'fastify';
import { EventBroker } from '../../src/server/events/event-broker.js';
import type { StreamEvent } from '../../src/server/events/event.js';
import { streamEvents } from '../../src/http/routes/event-stream.js';
import { mockNode } from '../mock/factories.js';

function bigEvent(i: number): StreamEvent {
  const node = mockNode({ ID: `node-${i}`, SecretID: 'very-secret', Meta: { pad: 'x'.repeat(64 * 1024) } });
  return { Topic: 'Node', Type: 'NodeEvent', Key: node.ID, Namespace: '', FilterKeys: null, Index: i, Payload: { Node: node } };
}

test('event stream: a reader that stops reading is cut off with an error frame; the publisher never blocks', async () => {
  const broker = new EventBroker(16);
  const app = fastify();
  app.get('/s', (req, reply) => streamEvents(req, reply, broker, { index: 0 }, 60_000));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  try {
    const sock = connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    sock.write('GET /s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    sock.pause(); // a reader that never reads
    await new Promise((r) => setTimeout(r, 100));
    // Publish far more than the socket buffers and the ring hold; each publish returns at once.
    for (let i = 1; i <= 200; i++) {
      broker.publish(i, [bigEvent(i)]);
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
    }
    // Now read everything the server wrote: some batches, then the error frame, then the end.
    let body = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (body += d));
    sock.resume();
    await new Promise((r) => sock.once('end', r));
    assert.ok(!body.includes('very-secret'), 'node SecretID never leaves the broker');
    const lines = body.split(/\r?\n/).filter((l) => l.startsWith('{'));
    const last = JSON.parse(lines[lines.length - 1]!) as { Error?: string };
    assert.match(last.Error ?? '', /fell behind/);
    const indexes = lines.slice(0, -1).map((l) => (JSON.parse(l) as { Index: number }).Index);
    assert.ok(indexes.length < 200, `the slow reader did not get everything (${indexes.length})`);
    assert.deepEqual(indexes, [...indexes].sort((a, b) => a - b), 'delivered in order');
    assert.equal(broker.subscriberCount(), 0);
    sock.destroy();
  } finally {
    await app.close();
  }
});
