/**
 * The candidate set kept across evaluations (candidate-set.ts): evaluations against the same
 * nodes table share it and answer exactly as a fresh one would; any node change (a new node,
 * one made ineligible) starts a new one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockEval, mockJob, mockNode } from '../mock/factories.js';
import type { Job, Node } from '../../src/structs/index.js';
import { candidateSetFor } from '../../src/scheduler/candidate-set.js';
import { SchedulerHarness, planPlaced } from './harness.js';

/** 40 nodes: every 4th lacks the driver, the next is on the excluded rack, the rest are fine. */
function mixedCluster(h: SchedulerHarness): Node[] {
  const nodes: Node[] = [];
  for (let i = 0; i < 40; i++) {
    const n = mockNode({ ID: `node-${String(i).padStart(3, '0')}`, Name: `n${i}`, Meta: { rack: i % 4 === 1 ? 'bad' : 'good' } });
    if (i % 4 === 0) n.Drivers = {};
    h.state.upsertNode(n);
    nodes.push(n);
  }
  return nodes;
}

function rackJob(id: string, count: number): Job {
  const job = mockJob({ ID: id, Constraints: [{ LTarget: '${meta.rack}', RTarget: 'good', Operand: '=' }, { LTarget: '${node.unique.name}', RTarget: 'n2', Operand: '!=' }] });
  job.TaskGroups = job.TaskGroups.map((g) => ({ ...g, Count: count }));
  return job;
}

test('evaluations against one nodes table share the candidate set; a node change starts a new one', () => {
  const h = new SchedulerHarness();
  mixedCluster(h);
  const job = rackJob('a', 1);
  h.state.upsertJob(job);
  const first = candidateSetFor(h.state.snapshot(), job, h.random);
  assert.ok(first);
  assert.equal(first.nodes.length, 40);
  // A job write leaves the nodes table alone: same set.
  h.state.upsertJob(rackJob('b', 1));
  assert.equal(candidateSetFor(h.state.snapshot(), job, h.random), first);
  // A job of another scope: another set.
  const elsewhere = { ...job, Datacenters: ['dc-other'] };
  assert.notEqual(candidateSetFor(h.state.snapshot(), elsewhere, h.random), first);
  h.state.upsertNode(mockNode({ ID: 'node-new', Name: 'new' }));
  const after = candidateSetFor(h.state.snapshot(), job, h.random);
  assert.notEqual(after, first);
  assert.equal(after?.nodes.length, 41);
});

test('a second evaluation on the shared set filters with the same node-by-node metrics', async () => {
  const h = new SchedulerHarness();
  mixedCluster(h);
  for (const id of ['one', 'two']) {
    // More than fits: the walk passes over every node, the shared skip table included.
    const job = rackJob(id, 200);
    h.state.upsertJob(job);
    await h.process(mockEval(job));
    for (const a of planPlaced(h.lastPlan())) {
      const i = Number(a.NodeID.slice(5));
      assert.ok(i % 4 >= 2 && i !== 2, `placed on ${a.NodeID}`);
    }
    const m = h.lastEval().FailedTGAllocs?.web;
    assert.ok(m, `${id}: the group failed to place everything`);
    assert.equal(m.NodesEvaluated, 40);
    assert.equal(m.NodesFiltered, 21);
    assert.deepEqual(m.ConstraintFiltered, { 'missing drivers': 10, '${meta.rack} = good': 10, '${node.unique.name} != n2': 1 });
    assert.equal(m.NodesFiltered + m.NodesExhausted, 40);
  }
});

test('a node made ineligible after an evaluation gets nothing from the next one', async () => {
  const h = new SchedulerHarness();
  const nodes = mixedCluster(h);
  const first = rackJob('first', 10);
  h.state.upsertJob(first);
  await h.process(mockEval(first));
  assert.equal(planPlaced(h.lastPlan()).length, 10);
  // Every good node but one leaves the pool.
  const keep = 'node-003';
  for (const n of nodes) {
    if (n.ID === keep) continue;
    h.state.upsertNode({ ...h.state.nodeById(n.ID)!, SchedulingEligibility: 'ineligible' });
  }
  const second = rackJob('second', 3);
  h.state.upsertJob(second);
  await h.process(mockEval(second));
  const placed = planPlaced(h.lastPlan());
  assert.ok(placed.length > 0);
  for (const a of placed) assert.equal(a.NodeID, keep);
});
