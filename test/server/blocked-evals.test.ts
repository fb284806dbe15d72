import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BlockedEvals } from '../../src/server/broker/blocked-evals.js';
import type { Evaluation } from '../../src/structs/index.js';
import { mockEval, mockJob } from '../mock/factories.js';

describe('BlockedEvals', () => {
  it('keeps one blocked eval per job (newest) and re-enqueues all on unblock', () => {
    const enqueued: Evaluation[] = [];
    const canceled: Evaluation[] = [];
    const b = new BlockedEvals({ enqueue: (e) => enqueued.push(e), onCancel: (e) => canceled.push(e) });
    const job = mockJob({ ID: 'j' });
    const old = mockEval(job, { Status: 'blocked', CreateIndex: 5 });
    const newer = mockEval(job, { Status: 'blocked', CreateIndex: 8 });
    const other = mockEval(mockJob({ ID: 'k' }), { Status: 'blocked', CreateIndex: 6 });
    b.block(old);
    b.block(newer);
    b.block(other);
    assert.equal(b.size(), 2);
    assert.deepEqual(canceled.map((e) => e.ID), [old.ID]);
    assert.equal(b.unblock(20), 2);
    assert.deepEqual(new Set(enqueued.map((e) => e.ID)), new Set([newer.ID, other.ID]));
    assert.equal(b.size(), 0);
  });

  it('re-enqueues at once an eval planned before the last unblock', () => {
    const enqueued: Evaluation[] = [];
    const b = new BlockedEvals({ enqueue: (e) => enqueued.push(e) });
    b.unblock(50);
    b.block(mockEval(mockJob(), { Status: 'blocked', SnapshotIndex: 40 }));
    assert.equal(enqueued.length, 1);
    assert.equal(b.size(), 0);
  });

  it('untracks a job', () => {
    const b = new BlockedEvals({ enqueue: () => {} });
    const job = mockJob({ ID: 'j' });
    b.block(mockEval(job, { Status: 'blocked' }));
    assert.ok(b.untrackJob(job.Namespace, job.ID));
    assert.equal(b.size(), 0);
  });
});
