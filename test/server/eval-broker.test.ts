import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/time/clock.js';
import { EvalBroker, EvalBrokerError } from '../../src/server/broker/eval-broker.js';
import type { Evaluation } from '../../src/structs/index.js';
import { mockEval, mockJob } from '../mock/factories.js';

function evalFor(jobId: string, over: Partial<Evaluation> = {}): Evaluation {
  return mockEval(mockJob({ ID: jobId }), over);
}

function setup(extra: Partial<ConstructorParameters<typeof EvalBroker>[0]> = {}) {
  const clock = new FakeClock();
  const failed: Evaluation[] = [];
  const canceled: Evaluation[] = [];
  const broker = new EvalBroker({
    clock,
    nackTimeoutMs: 5_000,
    initialNackDelayMs: 100,
    subsequentNackDelayMs: 1_000,
    onFailed: (e) => failed.push(e),
    onCancelable: (es) => canceled.push(...es),
    ...extra,
  });
  return { clock, broker, failed, canceled };
}

describe('EvalBroker', () => {
  it('delivers by priority, then age', async () => {
    const { broker } = setup();
    broker.enqueue(evalFor('low', { Priority: 10, CreateIndex: 1 }));
    broker.enqueue(evalFor('high', { Priority: 90, CreateIndex: 3 }));
    broker.enqueue(evalFor('mid-old', { Priority: 50, CreateIndex: 2 }));
    broker.enqueue(evalFor('mid-new', { Priority: 50, CreateIndex: 4 }));
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const d = await broker.dequeue(['service'], 0);
      order.push(d!.eval.JobID);
      broker.ack(d!.eval.ID, d!.token);
    }
    assert.deepEqual(order, ['high', 'mid-old', 'mid-new', 'low']);
  });

  it('only hands out evals of the requested schedulers', async () => {
    const { broker } = setup();
    broker.enqueue(evalFor('b', { Type: 'batch' }));
    assert.equal(await broker.dequeue(['service'], 0), null);
    assert.equal((await broker.dequeue(['batch'], 0))?.eval.JobID, 'b');
  });

  it('wakes a waiting dequeue on enqueue and times out with null', async () => {
    const { broker, clock } = setup();
    const waiting = broker.dequeue(['service'], 1_000);
    broker.enqueue(evalFor('j'));
    assert.equal((await waiting)?.eval.JobID, 'j');
    const timedOut = broker.dequeue(['service'], 1_000);
    await clock.advanceAsync(1_000);
    assert.equal(await timedOut, null);
  });

  it('requires the right token to ack', async () => {
    const { broker } = setup();
    broker.enqueue(evalFor('j'));
    const d = (await broker.dequeue(['service'], 0))!;
    assert.throws(() => broker.ack(d.eval.ID, 'wrong'), (e: unknown) => e instanceof EvalBrokerError && e.code === 'TOKEN_MISMATCH');
    broker.ack(d.eval.ID, d.token);
    assert.throws(() => broker.ack(d.eval.ID, d.token), (e: unknown) => e instanceof EvalBrokerError && e.code === 'EVAL_NOT_OUTSTANDING');
  });

  it('redelivers a nacked eval after the nack delay', async () => {
    const { broker, clock } = setup();
    broker.enqueue(evalFor('j'));
    const d = (await broker.dequeue(['service'], 0))!;
    broker.nack(d.eval.ID, d.token);
    assert.equal(await broker.dequeue(['service'], 0), null);
    await clock.advanceAsync(100);
    const again = await broker.dequeue(['service'], 0);
    assert.equal(again?.eval.ID, d.eval.ID);
    assert.notEqual(again?.token, d.token);
  });

  it('nacks an eval left unacked past the nack timeout', async () => {
    const { broker, clock } = setup();
    broker.enqueue(evalFor('j'));
    const d = (await broker.dequeue(['service'], 0))!;
    await clock.advanceAsync(5_000);
    assert.equal(broker.outstanding(d.eval.ID), undefined);
    await clock.advanceAsync(100);
    assert.equal((await broker.dequeue(['service'], 0))?.eval.ID, d.eval.ID);
  });

  it('moves an eval to the failed queue after the delivery limit', async () => {
    const { broker, clock, failed } = setup();
    const e = evalFor('j');
    broker.enqueue(e);
    for (let i = 0; i < 3; i++) {
      const d = (await broker.dequeue(['service'], 0))!;
      assert.equal(d.eval.ID, e.ID);
      broker.nack(d.eval.ID, d.token);
      await clock.advanceAsync(1_000);
    }
    assert.deepEqual(failed.map((f) => f.ID), [e.ID]);
    assert.equal(await broker.dequeue(['service'], 0), null);
    assert.equal(broker.stats().failed, 1);
  });

  it('keeps one eval per job outstanding; the newest pending one wins', async () => {
    const { broker, canceled } = setup();
    const first = evalFor('j', { CreateIndex: 1, ModifyIndex: 1 });
    const second = evalFor('j', { CreateIndex: 2, ModifyIndex: 2 });
    const third = evalFor('j', { CreateIndex: 3, ModifyIndex: 3 });
    broker.enqueue(first);
    const d = (await broker.dequeue(['service'], 0))!;
    broker.enqueue(second);
    broker.enqueue(third);
    assert.equal(await broker.dequeue(['service'], 0), null);
    assert.equal(broker.stats().pending, 2);
    broker.ack(d.eval.ID, d.token);
    const next = (await broker.dequeue(['service'], 0))!;
    assert.equal(next.eval.ID, third.ID);
    assert.deepEqual(canceled.map((c) => c.ID), [second.ID]);
  });

  it('holds evals with a future WaitUntil until the clock reaches it', async () => {
    const { broker, clock } = setup();
    const e = evalFor('j', { WaitUntil: new Date(clock.now() + 30_000).toISOString() });
    broker.enqueue(e);
    assert.equal(await broker.dequeue(['service'], 0), null);
    assert.equal(broker.stats().delayed, 1);
    await clock.advanceAsync(30_000);
    assert.equal((await broker.dequeue(['service'], 0))?.eval.ID, e.ID);
  });

  it('pauses, resumes and flushes', async () => {
    const { broker } = setup();
    broker.pause();
    broker.enqueue(evalFor('a'));
    assert.equal(await broker.dequeue(['service'], 0), null);
    const waiting = broker.dequeue(['service'], 10_000);
    broker.resume();
    assert.equal((await waiting)?.eval.JobID, 'a');
    broker.enqueue(evalFor('b'));
    const w2 = broker.dequeue(['batch'], 10_000);
    broker.flush();
    assert.equal(await w2, null);
    assert.equal(broker.stats().ready, 0);
  });
});
