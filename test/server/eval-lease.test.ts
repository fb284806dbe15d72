import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '../../src/server/server.js';
import { ServerError } from '../../src/server/server-error.js';
import { EvalBroker } from '../../src/server/broker/eval-broker.js';
import { StateStore } from '../../src/server/state/state-store.js';
import { Worker } from '../../src/server/worker/worker.js';
import type { SchedulerFactory } from '../../src/scheduler/interfaces.js';
import { emptyPlan, type Evaluation, type PlanResult } from '../../src/structs/index.js';
import { FakeClock } from '../../src/time/clock.js';
import { mockEval, mockJob } from '../mock/factories.js';

const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('EvalBroker nack timer pause', () => {
  it('does not time out a paused eval and restarts the full timeout on resume', async () => {
    const clock = new FakeClock();
    const broker = new EvalBroker({ clock, nackTimeoutMs: 5_000, initialNackDelayMs: 100 });
    broker.enqueue(mockEval(mockJob({ ID: 'j' })));
    const d = (await broker.dequeue(['service'], 0))!;
    await clock.advanceAsync(4_000);
    broker.pauseNackTimeout(d.eval.ID, d.token);
    await clock.advanceAsync(60_000);
    assert.equal(broker.outstanding(d.eval.ID), d.token);
    broker.resumeNackTimeout(d.eval.ID, d.token);
    await clock.advanceAsync(4_999);
    assert.equal(broker.outstanding(d.eval.ID), d.token);
    await clock.advanceAsync(1);
    assert.equal(broker.outstanding(d.eval.ID), undefined);
  });
});

describe('Worker eval lease', () => {
  it('keeps its eval outstanding while a plan waits in the plan queue past the nack timeout', async () => {
    const clock = new FakeClock();
    const broker = new EvalBroker({ clock, nackTimeoutMs: 5_000 });
    const state = new StateStore();
    const submitted = deferred();
    const applied = deferred<PlanResult>();
    const done = deferred();
    const factory: SchedulerFactory = (_s, planner) => ({
      async process(e: Evaluation) {
        await planner.submitPlan(emptyPlan(e.ID, '', e.Priority, null));
        done.resolve();
      },
    });
    const w = new Worker({
      broker,
      state,
      clock,
      random: () => 0,
      schedulers: ['service'],
      schedulerFactoryFor: () => factory,
      submitPlan: () => {
        submitted.resolve();
        return applied.promise;
      },
      upsertEvals: async () => undefined,
    });
    const e = mockEval(mockJob({ ID: 'j' }), { ModifyIndex: 0 });
    broker.enqueue(e);
    w.start();
    await submitted.promise;
    const token = broker.outstanding(e.ID);
    assert.ok(token);
    await clock.advanceAsync(30_000);
    assert.equal(broker.outstanding(e.ID), token, 'the eval was nacked while its plan was queued');
    applied.resolve({ NodeUpdate: {}, NodeAllocation: {}, NodePreemptions: {}, Deployment: null, DeploymentUpdates: [], RejectedNodes: [], IneligibleNodes: [], RefreshIndex: 0, AllocIndex: 0 } as unknown as PlanResult);
    await done.promise;
    await w.stop();
  });
});

describe('Server eval writes', () => {
  it('refuses eval writes from a worker whose eval timed out and was redelivered', { timeout: 10_000 }, async () => {
    const clock = new FakeClock();
    const dataDir = mkdtempSync(join(tmpdir(), 'caravan-lease-'));
    dirs.push(dataDir);
    const entered = deferred();
    const release = deferred();
    const results: unknown[] = [];
    let calls = 0;
    const factory: SchedulerFactory = (_s, planner) => ({
      async process(e: Evaluation) {
        calls++;
        if (calls === 1) {
          entered.resolve();
          await release.promise;
        }
        try {
          await planner.updateEval({ ...e, Status: 'complete', StatusDescription: `attempt ${calls}` });
          results.push('ok');
        } catch (err) {
          results.push(err);
          throw err;
        }
      },
    });
    const s = await Server.open({ dataDir, clock, numWorkers: 1, schedulerFactory: () => factory, broker: { nackTimeoutMs: 5_000, initialNackDelayMs: 100 } });
    servers.push(s);
    const r = await s.registerJob(mockJob({ ID: 'web' }));
    await entered.promise;
    await clock.advanceAsync(5_000);
    assert.equal(s.duties!.broker.outstanding(r.evalId), undefined);
    release.resolve();
    for (let i = 0; i < 100 && results.length === 0; i++) await new Promise((res) => setImmediate(res));
    const first = results[0];
    assert.ok(first instanceof ServerError && first.code === 'EVAL_TOKEN_MISMATCH', `stale write was not refused: ${String(first)}`);
    assert.notEqual(s.state.evalById(r.evalId)?.Status, 'complete');
    // The redelivered eval completes normally.
    for (let i = 0; i < 50 && s.state.evalById(r.evalId)?.Status !== 'complete'; i++) {
      await clock.advanceAsync(100);
      await new Promise((res) => setTimeout(res, 5));
    }
    assert.equal(s.state.evalById(r.evalId)?.StatusDescription, 'attempt 2');
  });
});
