import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockEval, mockJob, mockNode, mockSystemJob, mockTaskGroup } from '../mock/factories.js';
import type { Job, Plan } from '../../src/structs/index.js';
import { SchedulerHarness, planPlaced } from './harness.js';

const NODES = 300;

function setup(sliceMs: number): SchedulerHarness {
  const h = new SchedulerHarness();
  h.sliceMs = sliceMs;
  for (let i = 0; i < NODES; i++) h.state.upsertNode(mockNode({ ID: `node-${String(i).padStart(4, '0')}` }));
  return h;
}

/**
 * Runs the evaluation of `job` while the event loop keeps turning; counts the turns taken before
 * the scheduler submitted its plan, and writes a new node to the live state at the first turn
 * (a write the evaluation's snapshot must not see).
 */
async function evaluateWhileLoopTurns(h: SchedulerHarness, job: Job): Promise<{ turnsBeforePlan: number; plan: Plan }> {
  h.state.upsertJob(job);
  let turns = 0;
  let turnsBeforePlan = -1;
  let running = true;
  const tick = (): void => {
    if (!running) return;
    if (turns++ === 0) h.state.upsertNode(mockNode({ ID: 'node-joined-meanwhile' }));
    setImmediate(tick);
  };
  const submit = h.submitPlan.bind(h);
  h.submitPlan = (plan) => {
    if (turnsBeforePlan < 0) turnsBeforePlan = turns;
    return submit(plan);
  };
  setImmediate(tick);
  try {
    await h.process(mockEval(job));
  } finally {
    running = false;
  }
  return { turnsBeforePlan, plan: h.lastPlan() };
}

/** What a plan places, by allocation: name, node and ID (the harness's IDs and random source repeat). */
function placements(plan: Plan): string[] {
  return planPlaced(plan).map((a) => `${a.Name}@${a.NodeID}#${a.ID}`).sort();
}

test('a system evaluation over many nodes lets the event loop run before its plan, and places what it would without yielding', async () => {
  const yielding = await evaluateWhileLoopTurns(setup(0), mockSystemJob());
  const straight = await evaluateWhileLoopTurns(setup(Infinity), mockSystemJob());
  assert.ok(yielding.turnsBeforePlan > 1, `the loop turned ${yielding.turnsBeforePlan} times during the evaluation`);
  assert.equal(straight.turnsBeforePlan, 0, 'a scheduler that never yields holds the loop until its plan');
  assert.equal(planPlaced(yielding.plan).length, NODES, 'the node written meanwhile is not in the snapshot');
  assert.deepEqual(placements(yielding.plan), placements(straight.plan));
  assert.deepEqual(yielding.plan.Annotations, straight.plan.Annotations);
});

test('a service evaluation of many placements lets the event loop run before its plan, and places what it would without yielding', async () => {
  const job = (): Job => mockJob({ TaskGroups: [mockTaskGroup({ Count: 200 })] });
  const yielding = await evaluateWhileLoopTurns(setup(0), job());
  const straight = await evaluateWhileLoopTurns(setup(Infinity), job());
  assert.ok(yielding.turnsBeforePlan > 1, `the loop turned ${yielding.turnsBeforePlan} times during the evaluation`);
  assert.equal(straight.turnsBeforePlan, 0);
  assert.equal(planPlaced(yielding.plan).length, 200);
  assert.ok(!planPlaced(yielding.plan).some((a) => a.NodeID === 'node-joined-meanwhile'), 'the node written meanwhile is not in the snapshot');
  assert.deepEqual(placements(yielding.plan), placements(straight.plan));
});
