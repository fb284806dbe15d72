/**
 * Placement in bounded batches: however large a job's count, one reconciliation lists at most
 * maxPlacements new placements (the rest only counted), one evaluation places at most
 * maxPlacementsPerPlan allocations, and a follow-up evaluation places the next batch.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeTaint, reconcile } from '../../src/scheduler/reconciler.js';
import { MAX_PLACEMENTS_PER_PLAN } from '../../src/scheduler/plan-attempt.js';
import type { Evaluation, Job } from '../../src/structs/index.js';
import { mockEval, mockJob, mockNode, mockTaskGroup } from '../mock/factories.js';
import { SchedulerHarness, liveAllocs, planPlaced } from './harness.js';

const NOW_MS = 1_700_000_000_000;

function job(count: number): Job {
  return mockJob({ TaskGroups: [mockTaskGroup({ Count: count })] });
}

function cluster(nodes: number): SchedulerHarness {
  const h = new SchedulerHarness();
  for (let i = 0; i < nodes; i++) h.state.upsertNode(mockNode({ ID: `node-${String(i).padStart(3, '0')}` }));
  return h;
}

test('the reconciler lists at most maxPlacements placements of a count of a billion, and counts the rest', () => {
  const result = reconcile({ job: job(1_000_000_000), allocs: [], nodeTaint: () => NodeTaint.None, canUpdateInPlace: () => true, evalId: 'e', nowMs: NOW_MS, maxPlacements: 100 });
  assert.equal(result.place.length, 100);
  assert.deepEqual(result.place.slice(0, 2).map((p) => p.name), ['web.web[0]', 'web.web[1]']);
  assert.deepEqual(result.deferred, { web: 1_000_000_000 - 100 });
  assert.equal(result.desiredTGUpdates['web']?.Place, 1_000_000_000, 'the annotation still says what the job asks for');
});

test('without a budget the reconciler lists every placement and defers none', () => {
  const result = reconcile({ job: job(7), allocs: [], nodeTaint: () => NodeTaint.None, canUpdateInPlace: () => true, evalId: 'e', nowMs: NOW_MS });
  assert.equal(result.place.length, 7);
  assert.deepEqual(result.deferred, {});
});

test('one evaluation places a batch; follow-up evaluations place the rest at the next free indexes', async () => {
  const h = cluster(10);
  h.maxPlacementsPerPlan = 5;
  const j = job(12);
  h.state.upsertJob(j);
  let ev: Evaluation = mockEval(j);
  const batches: number[] = [];
  for (let i = 0; i < 10; i++) {
    const created = h.createdEvals.length;
    await h.process(ev);
    batches.push(planPlaced(h.lastPlan()).length);
    const done = h.lastEval();
    assert.equal(done.Status, 'complete');
    assert.equal(done.FailedTGAllocs, null);
    if (done.NextEval === '') break;
    const next = h.createdEvals[created]!;
    assert.equal(next.ID, done.NextEval);
    assert.equal(next.Status, 'pending');
    assert.equal(next.TriggeredBy, 'queued-allocs');
    assert.equal(next.PreviousEval, ev.ID);
    assert.equal(next.WaitUntil, null, 'due at once');
    ev = next;
  }
  assert.deepEqual(batches, [5, 5, 2]);
  const names = liveAllocs(h, 'web').map((a) => a.Name).sort();
  assert.deepEqual(names, Array.from({ length: 12 }, (_, i) => `web.web[${i}]`).sort());
  assert.deepEqual(h.evalUpdates.map((e) => e.QueuedAllocations?.['web']), [7, 2, 0], 'what is left is queued');
});

test('a count of a billion fills the cluster in one bounded evaluation, then blocks with the rest queued', async () => {
  const h = cluster(2);
  const j = job(1_000_000_000);
  h.state.upsertJob(j);
  await h.process(mockEval(j));
  assert.equal(h.plans.length, 1);
  const placed = planPlaced(h.lastPlan()).length;
  assert.ok(placed > 0 && placed <= MAX_PLACEMENTS_PER_PLAN, `placed ${placed}`);
  const done = h.lastEval();
  assert.equal(done.Status, 'complete');
  assert.equal(done.NextEval, '', 'a group that cannot place more gets no follow-up: its blocked eval waits for room');
  assert.notEqual(done.BlockedEval, '');
  assert.equal(done.QueuedAllocations?.['web'], 1_000_000_000 - placed);
  const failed = done.FailedTGAllocs?.['web'];
  assert.ok(failed);
  assert.equal(failed.CoalescedFailures, 1_000_000_000 - placed - 1);
  assert.equal(h.reblockedEvals.length, 1);
});
