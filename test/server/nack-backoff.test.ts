import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '../../src/server/server.js';
import { EvalBroker, type Dequeued } from '../../src/server/broker/eval-broker.js';
import { StateStore } from '../../src/server/state/state-store.js';
import { Worker } from '../../src/server/worker/worker.js';
import type { SchedulerFactory } from '../../src/scheduler/interfaces.js';
import { FakeClock } from '../../src/time/clock.js';
import { mockEval, mockJob } from '../mock/factories.js';

const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe('nack redelivery delay', () => {
  it('waits the initial delay after the first nack, then (deliveries-1) × the subsequent delay', async () => {
    const e = mockEval(mockJob({ ID: 'j' }));
    const clock2 = new FakeClock();
    const b2 = new EvalBroker({ clock: clock2, nackTimeoutMs: 60_000, deliveryLimit: 10, initialNackDelayMs: 100, subsequentNackDelayMs: 1_000 });
    b2.enqueue(e);
    const delays: number[] = [];
    let d = (await b2.dequeue(['service'], 0))!;
    for (let i = 0; i < 3; i++) {
      b2.nack(d.eval.ID, d.token);
      let waited = 0;
      let next: Dequeued | null = null;
      while (!next && waited <= 10_000) {
        await clock2.advanceAsync(100);
        waited += 100;
        next = await b2.dequeue(['service'], 0);
      }
      delays.push(waited);
      d = next!;
    }
    assert.deepEqual(delays, [100, 1_000, 2_000]);
  });
});

describe('delivery limit', () => {
  it('names the configured limit and the last error in the failed eval', { timeout: 10_000 }, async () => {
    const clock = new FakeClock();
    const dataDir = mkdtempSync(join(tmpdir(), 'caravan-limit-'));
    dirs.push(dataDir);
    const failing: SchedulerFactory = () => ({
      async process() {
        throw new Error('boom');
      },
    });
    const s = await Server.open({
      dataDir, clock, numWorkers: 1, schedulerFactory: () => failing,
      broker: { deliveryLimit: 2, initialNackDelayMs: 10, subsequentNackDelayMs: 10 },
    });
    servers.push(s);
    const r = await s.registerJob(mockJob({ ID: 'web' }));
    for (let i = 0; i < 200 && s.state.evalById(r.evalId)?.Status !== 'failed'; i++) {
      await clock.advanceAsync(50);
      await new Promise((res) => setTimeout(res, 5));
    }
    assert.equal(s.state.evalById(r.evalId)?.Status, 'failed');
    assert.equal(s.state.evalById(r.evalId)?.StatusDescription, 'evaluation reached delivery limit (2): boom');
  });
});

describe('worker backoff', () => {
  it('resets its failure count after a successful dequeue, not only after an ack', async () => {
    const clock = new FakeClock();
    const real = new EvalBroker({ clock, nackTimeoutMs: 60_000 });
    let dequeueErrors = 3;
    let dequeues = 0;
    const broker = Object.create(real) as EvalBroker;
    broker.dequeue = async (schedulers, timeoutMs, signal) => {
      dequeues++;
      if (dequeueErrors > 0) {
        dequeueErrors--;
        throw new Error('broker unavailable');
      }
      return real.dequeue(schedulers, timeoutMs, signal);
    };
    const failing: SchedulerFactory = () => ({
      async process() {
        throw new Error('boom');
      },
    });
    const w = new Worker({
      broker, state: new StateStore(), clock, random: () => 0, schedulers: ['service'],
      schedulerFactoryFor: () => failing, submitPlan: async () => { throw new Error('unused'); }, upsertEvals: async () => undefined,
    });
    w.start();
    // Three dequeue errors: backoffs of 20, 80 and 320 ms.
    for (const ms of [20, 80, 320]) {
      await flush();
      await clock.advanceAsync(ms);
    }
    await flush();
    real.enqueue(mockEval(mockJob({ ID: 'j' }), { ModifyIndex: 0 }));
    await flush();
    const before = dequeues;
    // The eval was dequeued (failures reset) and failed: the next backoff is the base 20 ms, not 1280 ms.
    await clock.advanceAsync(20);
    await flush();
    assert.ok(dequeues > before, 'worker still backing off with the failure count of earlier dequeue errors');
    const stopping = w.stop();
    await clock.advanceAsync(5_000);
    await stopping;
  });
});
