/**
 * LeaderHold (Nomad's RPCHoldTimeout) with a fake clock: a request that finds no leader waits
 * for one, and is answered with the leader's route as soon as one is known; it is refused only
 * after the hold time; it is let go at once when its caller leaves or the agent shuts down; and
 * thousands held at once share one timer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/time/clock.js';
import { LeaderHold } from '../../src/http/forward-to-leader/leader-hold.js';
import type { LeaderRoute } from '../../src/http/forward-to-leader/leader-forward.js';

function settledState<T>(p: Promise<T>): { value: T | undefined; done: boolean } {
  const s: { value: T | undefined; done: boolean } = { value: undefined, done: false };
  void p.then((v) => {
    s.value = v;
    s.done = true;
  });
  return s;
}

describe('LeaderHold', () => {
  it('holds a request while no leader is known and routes it to the leader once one is', async () => {
    const clock = new FakeClock();
    const hold = new LeaderHold(clock, 5_000, new AbortController().signal);
    let route: LeaderRoute = { kind: 'no-leader' };
    const r = settledState(hold.wait(() => route, new AbortController().signal));
    await clock.advanceAsync(2_000);
    assert.equal(r.done, false, 'still held during the election');
    route = { kind: 'leader', address: '127.0.0.1:4647' };
    await clock.advanceAsync(100);
    assert.deepEqual(r.value, { kind: 'leader', address: '127.0.0.1:4647' });
    assert.equal(hold.size(), 0);
    assert.equal(clock.pendingTimers(), 0, 'no timer left once nothing is held');
  });

  it('a new leader still catching up: held until it is ready, then answered here', async () => {
    const clock = new FakeClock();
    const hold = new LeaderHold(clock, 5_000, new AbortController().signal);
    let route: LeaderRoute = { kind: 'not-ready' };
    const r = settledState(hold.wait(() => route, new AbortController().signal));
    await clock.advanceAsync(500);
    route = { kind: 'local' };
    await clock.advanceAsync(100);
    assert.deepEqual(r.value, { kind: 'local' });
  });

  it('refuses after the hold time, and at once with a hold of 0 or when a leader is known', async () => {
    const clock = new FakeClock();
    const hold = new LeaderHold(clock, 5_000, new AbortController().signal);
    const r = settledState(hold.wait(() => ({ kind: 'no-leader' }), new AbortController().signal));
    await clock.advanceAsync(4_900);
    assert.equal(r.done, false);
    await clock.advanceAsync(200);
    assert.deepEqual(r.value, { kind: 'no-leader' });
    const none = new LeaderHold(clock, 0, new AbortController().signal);
    assert.deepEqual(await none.wait(() => ({ kind: 'no-leader' }), new AbortController().signal), { kind: 'no-leader' });
    assert.deepEqual(await hold.wait(() => ({ kind: 'local' }), new AbortController().signal), { kind: 'local' });
  });

  it('lets a request go when its caller leaves or the agent shuts down', async () => {
    const clock = new FakeClock();
    const shutdown = new AbortController();
    const hold = new LeaderHold(clock, 5_000, shutdown.signal);
    const gone = new AbortController();
    const left = settledState(hold.wait(() => ({ kind: 'no-leader' }), gone.signal));
    const other = settledState(hold.wait(() => ({ kind: 'no-leader' }), new AbortController().signal));
    gone.abort();
    await clock.advanceAsync(0);
    assert.deepEqual(left.value, { kind: 'no-leader' });
    assert.equal(other.done, false);
    shutdown.abort();
    await clock.advanceAsync(0);
    assert.deepEqual(other.value, { kind: 'no-leader' });
    assert.equal(clock.pendingTimers(), 0);
  });

  it('thousands of held requests share one timer', async () => {
    const clock = new FakeClock();
    const hold = new LeaderHold(clock, 5_000, new AbortController().signal);
    let route: LeaderRoute = { kind: 'no-leader' };
    const held = Array.from({ length: 2_000 }, () => settledState(hold.wait(() => route, new AbortController().signal)));
    assert.equal(hold.size(), 2_000);
    assert.equal(clock.pendingTimers(), 1);
    route = { kind: 'local' };
    await clock.advanceAsync(50);
    assert.ok(held.every((h) => h.done && h.value?.kind === 'local'));
  });
});
