import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventBroker, EventStreamError } from '../../src/server/events/event-broker.js';
import type { StreamEvent } from '../../src/server/events/event.js';
import { mockJob } from '../mock/factories.js';

function jobEvent(id: string, index: number): StreamEvent {
  const job = mockJob({ ID: id });
  return { Topic: 'Job', Type: 'JobRegistered', Key: id, Namespace: 'default', FilterKeys: null, Index: index, Payload: { Job: job } };
}

describe('EventBroker', () => {
  it('replays buffered batches after the index and then follows new ones', async () => {
    const b = new EventBroker(10);
    b.publish(1, [jobEvent('a', 1)]);
    b.publish(2, [jobEvent('b', 2)]);
    const ac = new AbortController();
    const it = b.subscribe({ index: 1, signal: ac.signal })[Symbol.asyncIterator]();
    const first = await it.next();
    assert.equal(first.value?.Index, 2);
    const pending = it.next();
    b.publish(3, [jobEvent('c', 3)]);
    assert.equal((await pending).value?.Index, 3);
    ac.abort();
    assert.equal((await it.next()).done, true);
  });

  it('filters by topic and key', async () => {
    const b = new EventBroker(10);
    b.publish(1, [jobEvent('a', 1)]);
    b.publish(2, [jobEvent('b', 2)]);
    b.publish(3, [{ ...jobEvent('x', 3), Topic: 'Node', Namespace: '' }]);
    const ac = new AbortController();
    const it = b.subscribe({ topics: new Map([['Job', ['b']]]), signal: ac.signal })[Symbol.asyncIterator]();
    const got = await it.next();
    assert.equal(got.value?.Events[0]?.Key, 'b');
    ac.abort();
    await it.next();
  });

  it('drops a subscriber that falls behind the buffer', async () => {
    const b = new EventBroker(2);
    b.publish(1, [jobEvent('a', 1)]);
    const it = b.subscribe({})[Symbol.asyncIterator]();
    for (let i = 2; i <= 5; i++) b.publish(i, [jobEvent(`j${i}`, i)]);
    await assert.rejects(it.next(), (e: unknown) => e instanceof EventStreamError && e.code === 'SUBSCRIBER_TOO_SLOW');
  });

  it('keeps at most maxEvents events, dropping whole old batches but never the newest', async () => {
    const b = new EventBroker(100, 5);
    b.publish(1, [jobEvent('a', 1), jobEvent('b', 1), jobEvent('c', 1)]);
    b.publish(2, [jobEvent('d', 2), jobEvent('e', 2)]);
    b.publish(3, [jobEvent('f', 3)]);
    const ac = new AbortController();
    const it = b.subscribe({ index: 0, signal: ac.signal })[Symbol.asyncIterator]();
    // Batch 1 went: 3 + 2 + 1 events exceed 5.
    assert.equal((await it.next()).value?.Index, 2);
    assert.equal((await it.next()).value?.Index, 3);
    ac.abort();
    await it.next();
    const big = new EventBroker(100, 2);
    big.publish(7, [jobEvent('x', 7), jobEvent('y', 7), jobEvent('z', 7)]);
    const ac2 = new AbortController();
    const it2 = big.subscribe({ index: 0, signal: ac2.signal })[Symbol.asyncIterator]();
    assert.equal((await it2.next()).value?.Events.length, 3);
    ac2.abort();
    await it2.next();
  });
});
