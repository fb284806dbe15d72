/**
 * Static feasibility answered per computed node class, constraints on unique values checked per
 * node, and the walk that jumps over infeasible candidates: the placements and the failure
 * metrics must be what a node-by-node check gives.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockEval, mockJob, mockNode } from '../mock/factories.js';
import type { Node } from '../../src/structs/index.js';
import { computedClass, constraintEscapesClass } from '../../src/scheduler/node-class.js';
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

test('nodes equal but for unique values share a class; a unique value escapes it', () => {
  const a = mockNode({ ID: 'a', Name: 'a', Meta: { rack: 'r1' } });
  const b = mockNode({ ID: 'b', Name: 'b', Meta: { rack: 'r1' } });
  const c = mockNode({ ID: 'c', Name: 'c', Meta: { rack: 'r2' } });
  assert.equal(computedClass(a), computedClass(b), 'IDs, names and unique.* attributes do not split classes');
  assert.notEqual(computedClass(a), computedClass(c), 'meta does');
  assert.equal(constraintEscapesClass({ LTarget: '${node.unique.name}', RTarget: 'a' }), true);
  assert.equal(constraintEscapesClass({ LTarget: '${attr.unique.hostname}', RTarget: 'a' }), true);
  assert.equal(constraintEscapesClass({ LTarget: '${meta.rack}', RTarget: 'r1' }), false);
});

test('per-class answers, per-node unique constraints and skipped candidates give node-by-node metrics', async () => {
  const h = new SchedulerHarness();
  mixedCluster(h);
  // 20 good nodes, one excluded by name; 7 allocations of 500 MHz fit on each (4,000 MHz nodes).
  const job = mockJob({ Constraints: [{ LTarget: '${meta.rack}', RTarget: 'good', Operand: '=' }, { LTarget: '${node.unique.name}', RTarget: 'n2', Operand: '!=' }] });
  job.TaskGroups = job.TaskGroups.map((g) => ({ ...g, Count: 200 }));
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  const placed = planPlaced(h.lastPlan());
  assert.equal(placed.length, 19 * 7);
  for (const a of placed) {
    const i = Number(a.NodeID.slice(5));
    assert.ok(i % 4 >= 2 && i !== 2, `placed on ${a.NodeID}`);
  }
  const m = h.lastEval().FailedTGAllocs?.web;
  assert.ok(m, 'the group failed to place everything');
  assert.equal(m.NodesEvaluated, 40);
  assert.equal(m.NodesFiltered, 21);
  assert.deepEqual(m.ConstraintFiltered, { 'missing drivers': 10, '${meta.rack} = good': 10, '${node.unique.name} != n2': 1 });
  assert.equal(m.NodesExhausted, 19);
  assert.deepEqual(m.DimensionExhausted, { cpu: 19 });
  assert.equal(m.CoalescedFailures, 200 - 19 * 7 - 1);
});
