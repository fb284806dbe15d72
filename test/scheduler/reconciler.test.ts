/**
 * Table tests of the reconciler alone: a pure diff of (job, allocations, node taints, now) into
 * placements, stops, in-place updates and delayed reschedules, with no state store or planner.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeTaint, reconcile, type ReconcileInput } from '../../src/scheduler/reconciler.js';
import type { Allocation, Job } from '../../src/structs/index.js';
import { mockAlloc, mockJob, mockNode, mockTaskGroup } from '../mock/factories.js';

const NOW_MS = 1_700_000_000_000;
const node = mockNode();
const lostNode = mockNode();
const drainingNode = mockNode();

/** Service job "web" of `count` allocations, at job modify index `jmi`. */
function job(count: number, jmi = 10, over: Partial<Job> = {}): Job {
  return mockJob({ TaskGroups: [mockTaskGroup({ Count: count })], JobModifyIndex: jmi, ...over });
}

/** `n` running allocations web.web[0..n-1] of `j` on `on` (the mock node unless given). */
function running(j: Job, n: number, on = node, over: Partial<Allocation> = {}): Allocation[] {
  return Array.from({ length: n }, (_, i) => mockAlloc(j, on, { Name: `web.web[${i}]`, ClientStatus: 'running', ...over }));
}

interface Row {
  name: string;
  input: Partial<ReconcileInput> & Pick<ReconcileInput, 'job' | 'allocs'>;
  want: { place: number; stop: number; inplace: number; delayed: number; names?: { place?: string[]; stop?: string[] } };
}

const v1 = job(3);
/** web.web[0] failed just now; its policy's 30 s delay is not over (mockTaskGroup: exponential from 30 s). */
function failed(followup: string): Allocation {
  return mockAlloc(v1, node, { Name: 'web.web[0]', ClientStatus: 'failed', FollowupEvalID: followup, ModifyTime: NOW_MS * 1_000_000 });
}

const rows: Row[] = [
  { name: 'a new job places every allocation', input: { job: job(3), allocs: [] }, want: { place: 3, stop: 0, inplace: 0, delayed: 0, names: { place: ['web.web[0]', 'web.web[1]', 'web.web[2]'] } } },
  { name: 'nothing to do when the job runs as asked', input: { job: v1, allocs: running(v1, 3) }, want: { place: 0, stop: 0, inplace: 0, delayed: 0 } },
  { name: 'a stopped job stops every live allocation', input: { job: job(3, 10, { Stop: true }), allocs: running(v1, 3) }, want: { place: 0, stop: 3, inplace: 0, delayed: 0 } },
  { name: 'a deregistered job stops every live allocation', input: { job: undefined, allocs: running(v1, 2) }, want: { place: 0, stop: 2, inplace: 0, delayed: 0 } },
  {
    name: 'scaling down stops the highest indexes',
    input: { job: job(1), allocs: running(v1, 3) },
    want: { place: 0, stop: 2, inplace: 0, delayed: 0, names: { stop: ['web.web[1]', 'web.web[2]'] } },
  },
  {
    name: 'scaling up fills the lowest free indexes',
    input: { job: job(5), allocs: running(v1, 3) },
    want: { place: 2, stop: 0, inplace: 0, delayed: 0, names: { place: ['web.web[3]', 'web.web[4]'] } },
  },
  {
    name: 'an allocation on a lost node is stopped and replaced',
    input: { job: v1, allocs: [...running(v1, 2), mockAlloc(v1, lostNode, { Name: 'web.web[2]', ClientStatus: 'running' })], nodeTaint: (id) => (id === lostNode.ID ? NodeTaint.Lost : NodeTaint.None) },
    want: { place: 1, stop: 1, inplace: 0, delayed: 0, names: { place: ['web.web[2]'], stop: ['web.web[2]'] } },
  },
  {
    name: 'an allocation on a draining node migrates',
    input: { job: v1, allocs: [...running(v1, 2), mockAlloc(v1, drainingNode, { Name: 'web.web[2]', ClientStatus: 'running', DesiredTransition: { Migrate: true } })], nodeTaint: (id) => (id === drainingNode.ID ? NodeTaint.Draining : NodeTaint.None) },
    want: { place: 1, stop: 1, inplace: 0, delayed: 0, names: { place: ['web.web[2]'], stop: ['web.web[2]'] } },
  },
  {
    name: 'a job change allowed in place updates every allocation in place',
    input: { job: job(3, 20), allocs: running(v1, 3), canUpdateInPlace: () => true },
    want: { place: 0, stop: 0, inplace: 3, delayed: 0 },
  },
  {
    name: 'a destructive job change replaces every allocation (no update strategy)',
    input: { job: job(3, 20), allocs: running(v1, 3), canUpdateInPlace: () => false },
    want: { place: 3, stop: 3, inplace: 0, delayed: 0 },
  },
  {
    name: 'a failed allocation whose reschedule is not due yet is delayed, not placed',
    input: { job: v1, allocs: [...running(v1, 3).slice(1), failed('')] },
    want: { place: 0, stop: 0, inplace: 0, delayed: 1 },
  },
  {
    name: 'a failed allocation that already has its follow-up evaluation waits for it',
    input: { job: v1, allocs: [...running(v1, 3).slice(1), failed('another-eval')] },
    want: { place: 0, stop: 0, inplace: 0, delayed: 0 },
  },
  {
    name: 'the follow-up evaluation of a failed allocation reschedules it now',
    input: { job: v1, allocs: [...running(v1, 3).slice(1), failed('this-eval')] },
    want: { place: 1, stop: 1, inplace: 0, delayed: 0, names: { place: ['web.web[0]'], stop: ['web.web[0]'] } },
  },
  {
    name: 'finished batch work of this job keeps its slots',
    input: { job: batchJob(2, 50, 1), allocs: completed(batchJob(2, 50, 1), 2) },
    want: { place: 0, stop: 0, inplace: 0, delayed: 0 },
  },
  {
    name: 'a batch job purged and registered again under its ID runs again (the old finished allocations are history)',
    input: { job: batchJob(2, 90, 0), allocs: completed(batchJob(2, 50, 0), 2) },
    want: { place: 2, stop: 0, inplace: 0, delayed: 0, names: { place: ['web.web[0]', 'web.web[1]'] } },
  },
  {
    name: 'a new version of a finished batch job runs again',
    input: { job: batchJob(2, 50, 2), allocs: completed(batchJob(2, 50, 1), 2) },
    want: { place: 2, stop: 0, inplace: 0, delayed: 0 },
  },
];

/** Batch job "web" of `count`, registered at `createIndex`, at `version`. */
function batchJob(count: number, createIndex: number, version: number): Job {
  return mockJob({ Type: 'batch', TaskGroups: [mockTaskGroup({ Count: count })], CreateIndex: createIndex, Version: version, JobModifyIndex: createIndex });
}

/** `n` allocations of `j` that finished successfully. */
function completed(j: Job, n: number): Allocation[] {
  return running(j, n, node, { ClientStatus: 'complete' });
}

for (const row of rows) {
  test(`reconcile: ${row.name}`, () => {
    const r = reconcile({
      nodeTaint: () => NodeTaint.None,
      canUpdateInPlace: () => true,
      evalId: 'this-eval',
      nowMs: NOW_MS,
      ...row.input,
    });
    assert.equal(r.place.length, row.want.place, 'placements');
    assert.equal(r.stop.length, row.want.stop, 'stops');
    assert.equal(r.inplace.length, row.want.inplace, 'in place');
    assert.equal(r.delayed.length, row.want.delayed, 'delayed');
    if (row.want.names?.place) assert.deepEqual(r.place.map((p) => p.name).sort(), row.want.names.place);
    if (row.want.names?.stop) assert.deepEqual(r.stop.map((s) => s.alloc.Name).sort(), row.want.names.stop);
    // The annotations count what the result does.
    const du = Object.values(r.desiredTGUpdates);
    const sum = (k: 'Place' | 'Stop' | 'InPlaceUpdate') => du.reduce((n, d) => n + d[k], 0);
    assert.ok(sum('InPlaceUpdate') === r.inplace.length, 'InPlaceUpdate annotation');
  });
}
