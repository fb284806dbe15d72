/**
 * A herd let go by LeaderHold once a leader is known: the held writes first, all at once, then
 * the reads RELEASE_SLICE at a time with a turn of the event loop between slices — so a new
 * leader is not handed every client's blocking allocation watch in one turn while the writes it
 * must acknowledge (their log entries are applied on the same loop) wait behind them. A step
 * clock runs one timer (one turn) at a time.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Clock, Timer } from '../../src/time/clock.js';
import { LeaderHold, RELEASE_SLICE } from '../../src/http/forward-to-leader/leader-hold.js';
import type { LeaderRoute } from '../../src/http/forward-to-leader/leader-forward.js';

/** Runs its timers only when asked, one per step(). */
class StepClock implements Pick<Clock, 'now' | 'setTimer'> {
  private t = 0;
  private timers: { at: number; seq: number; fn: () => void; off: boolean }[] = [];
  private seq = 0;
  now(): number {
    return this.t;
  }
  setTimer(ms: number, fn: () => void): Timer {
    const e = { at: this.t + ms, seq: this.seq++, fn, off: false };
    this.timers.push(e);
    return { cancel: () => void (e.off = true) };
  }
  pending(): number {
    return this.timers.filter((e) => !e.off).length;
  }
  /** Fires the earliest timer, then lets the promise callbacks it set off run. */
  async step(): Promise<void> {
    const next = this.timers.filter((e) => !e.off).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
    assert.ok(next, 'a timer to run');
    next.off = true;
    this.t = next.at;
    next.fn();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  }
}

describe('LeaderHold: letting a herd go', () => {
  it('lets the held writes go first, then the reads a slice per turn of the loop', async () => {
    const clock = new StepClock();
    const hold = new LeaderHold(clock, 5_000, new AbortController().signal);
    let route: LeaderRoute = { kind: 'no-leader' };
    const released: string[] = [];
    const reads = 2 * RELEASE_SLICE + 50;
    for (let i = 0; i < reads; i++) void hold.wait(() => route, new AbortController().signal, 'read').then(() => released.push(`read ${i}`));
    // Held last, let go first.
    void hold.wait(() => route, new AbortController().signal, 'write').then(() => released.push('write'));

    await clock.step(); // a recheck: still no leader
    assert.deepEqual(released, []);
    route = { kind: 'leader', address: '127.0.0.1:4646' };

    await clock.step();
    assert.equal(released[0], 'write', 'the write goes first');
    assert.equal(released.length, 1 + RELEASE_SLICE, 'and one slice of reads in the same turn');
    assert.equal(hold.size(), reads - RELEASE_SLICE);

    await clock.step();
    assert.equal(released.length, 1 + 2 * RELEASE_SLICE, 'the next slice a turn later');
    await clock.step();
    assert.equal(released.length, 1 + reads, 'the rest');
    assert.deepEqual(released.slice(1), [...Array(reads).keys()].map((i) => `read ${i}`), 'reads in the order they were held');
    assert.equal(hold.size(), 0);
    assert.equal(clock.pending(), 0, 'no timer left once nothing is held');
  });
});
