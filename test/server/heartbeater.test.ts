import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/time/clock.js';
import { Heartbeater } from '../../src/server/heartbeat/heartbeater.js';

describe('Heartbeater', () => {
  it('gives the minimum TTL plus stagger and expires a node that misses it', () => {
    const clock = new FakeClock();
    const expired: string[] = [];
    const hb = new Heartbeater({ clock, random: () => 0.5, onExpire: (id) => expired.push(id), minTtlMs: 10_000, graceMs: 10_000 });
    const ttl = hb.reset('n1');
    assert.equal(ttl, 15_000);
    clock.advance(24_999);
    assert.deepEqual(expired, []);
    clock.advance(1);
    assert.deepEqual(expired, ['n1']);
    assert.equal(hb.tracking('n1'), false);
  });

  it('a heartbeat pushes the deadline out', () => {
    const clock = new FakeClock();
    const expired: string[] = [];
    const hb = new Heartbeater({ clock, random: () => 0, onExpire: (id) => expired.push(id), minTtlMs: 10_000, graceMs: 0 });
    hb.reset('n1');
    clock.advance(9_000);
    hb.reset('n1');
    clock.advance(9_000);
    assert.deepEqual(expired, []);
    clock.advance(1_000);
    assert.deepEqual(expired, ['n1']);
  });

  it('scales the TTL with the number of nodes (max heartbeats per second)', () => {
    const clock = new FakeClock();
    const hb = new Heartbeater({ clock, random: () => 0, onExpire: () => {}, minTtlMs: 10_000, maxHeartbeatsPerSecond: 50 });
    for (let i = 0; i < 1000; i++) hb.reset(`n${i}`);
    assert.equal(hb.baseTtlMs(), 20_000);
    hb.stop();
    assert.equal(clock.pendingTimers(), 0);
  });
});
