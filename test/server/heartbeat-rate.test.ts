/**
 * The heartbeat rate the leader sees, on a fake clock: nodes heartbeat as the client does
 * (heartbeatWaitMs of the TTL the server answered) against the leader's real Heartbeater, and
 * whatever the node count the leader receives no more than max_heartbeats_per_second — on
 * average about two thirds of it, as Nomad's TTL (N / rate plus a stagger of up to as much again)
 * makes it — and no node is marked down.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Heartbeater } from '../../src/server/heartbeat/heartbeater.js';
import { heartbeatWaitMs } from '../../src/client/heartbeat-wait.js';
import { FakeClock } from '../../src/time/clock.js';

/** A seeded random source (mulberry32), so a run is reproducible. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface RateRun {
  /** Heartbeats received in each 10 s window of the steady state. */
  windows: number[];
  meanPerSecond: number;
  expired: number;
}

/** `nodes` clients register together, then heartbeat for `seconds` simulated seconds. */
function run(nodes: number, maxPerSecond: number, seconds: number): RateRun {
  const clock = new FakeClock(0);
  let expired = 0;
  const hb = new Heartbeater({ clock, random: seeded(nodes), onExpire: () => expired++, minTtlMs: 1_000, maxHeartbeatsPerSecond: maxPerSecond, graceMs: 10_000 });
  const arrivals: number[] = [];
  const beat = (id: string): void => {
    arrivals.push(clock.now());
    const ttl = hb.reset(id);
    clock.setTimer(heartbeatWaitMs(ttl), () => beat(id));
  };
  for (let i = 0; i < nodes; i++) beat(`node-${i}`);
  for (let t = 0; t < seconds; t++) clock.advance(1_000);
  hb.stop();
  // Steady state: past the first rounds, where TTLs were sized for fewer nodes.
  const from = 4 * (nodes / maxPerSecond) * 1_000;
  const windows: number[] = [];
  for (let start = from; start + 10_000 <= seconds * 1_000; start += 10_000) {
    windows.push(arrivals.filter((at) => at >= start && at < start + 10_000).length);
  }
  const total = windows.reduce((a, b) => a + b, 0);
  return { windows, meanPerSecond: total / (windows.length * 10), expired };
}

describe('heartbeat rate at the leader', () => {
  for (const nodes of [500, 2_000]) {
    it(`${nodes} nodes with max_heartbeats_per_second = 50: at most 50 a second, about 33 on average, none missed`, () => {
      const r = run(nodes, 50, nodes <= 500 ? 200 : 400);
      assert.ok(r.windows.length >= 8, `enough steady-state windows (${r.windows.length})`);
      for (const w of r.windows) assert.ok(w <= 500, `a 10 s window saw ${w} heartbeats (> 50/s): ${r.windows.join(',')}`);
      // Nomad's TTL averages 1.5 × N/rate: the mean rate is 2/3 of the limit. A client that
      // heartbeats before its TTL runs out brings it near the limit.
      assert.ok(r.meanPerSecond <= 37.5, `mean ${r.meanPerSecond.toFixed(1)}/s, want ≈ 33`);
      assert.ok(r.meanPerSecond >= 28, `mean ${r.meanPerSecond.toFixed(1)}/s, want ≈ 33`);
      assert.equal(r.expired, 0, 'no node missed its TTL');
    });
  }
});
