import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockAlloc, mockEval, mockNode, mockSystemJob } from '../mock/factories.js';
import { SchedulerHarness, liveAllocs, planPlaced, planStopped } from './harness.js';

function setup(n: number) {
  const h = new SchedulerHarness();
  for (let i = 0; i < n; i++) h.state.upsertNode(mockNode({ ID: `node-${i}` }));
  return h;
}

test('a system job gets one alloc per feasible ready node', async () => {
  const h = setup(3);
  h.state.upsertNode(mockNode({ ID: 'win', Attributes: { 'kernel.name': 'windows' } }));
  const job = mockSystemJob();
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  const placed = planPlaced(h.lastPlan());
  assert.deepEqual(placed.map((a) => a.NodeID).sort(), ['node-0', 'node-1', 'node-2']);
  for (const a of placed) assert.equal(a.Name, 'system.web[0]');
  assert.equal(h.lastEval().FailedTGAllocs, null, 'filtered nodes are not failures');
});

test('system jobs follow nodes: new node placed, down node lost, ineligible node skipped', async () => {
  const h = setup(2);
  const job = mockSystemJob();
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  assert.equal(liveAllocs(h, 'system').length, 2);

  h.state.upsertNode(mockNode({ ID: 'node-new' }));
  h.state.upsertNode(mockNode({ ID: 'node-inel', SchedulingEligibility: 'ineligible' }));
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'node-new' }));
  assert.deepEqual(planPlaced(h.lastPlan()).map((a) => a.NodeID), ['node-new']);

  h.state.upsertNode({ ...h.state.nodeById('node-0')!, Status: 'down' });
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'node-0' }));
  const stopped = planStopped(h.lastPlan());
  assert.equal(stopped.length, 1);
  assert.equal(stopped[0]!.ClientStatus, 'lost');
  assert.equal(planPlaced(h.lastPlan()).length, 0, 'system allocs are not moved elsewhere');
  assert.deepEqual(liveAllocs(h, 'system').map((a) => a.NodeID).sort(), ['node-1', 'node-new']);
});

test('system job update is destructive on the same node when tasks change', async () => {
  const h = setup(2);
  const job = mockSystemJob();
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  const next = { ...job, TaskGroups: [{ ...job.TaskGroups[0]!, Tasks: [{ ...job.TaskGroups[0]!.Tasks[0]!, Config: { run_for: '1h' } }] }] };
  h.state.upsertJob(next);
  await h.process(mockEval(next));
  const plan = h.lastPlan();
  assert.equal(planStopped(plan).length, 2);
  const placed = planPlaced(plan);
  assert.equal(placed.length, 2);
  for (const a of placed) assert.ok(planStopped(plan).some((s) => s.NodeID === a.NodeID));
  assert.equal(plan.Annotations?.DesiredTGUpdates.web?.DestructiveUpdate, 2);
});

test('sysbatch allocs that completed are not rerun; exhausted nodes are reported', async () => {
  const h = setup(2);
  const job = mockSystemJob({ ID: 'sb', Name: 'sb', Type: 'sysbatch' });
  h.state.upsertJob(job);
  h.state.upsertAlloc(mockAlloc(job, h.state.nodeById('node-0')!, { Name: 'sb.web[0]', ClientStatus: 'complete' }));
  await h.process(mockEval(job));
  assert.deepEqual(planPlaced(h.lastPlan()).map((a) => a.NodeID), ['node-1']);

  const big = mockSystemJob({ ID: 'big', Name: 'big' });
  big.TaskGroups[0]!.Tasks[0]!.Resources.CPU = 10_000;
  h.state.upsertJob(big);
  await h.process(mockEval(big));
  const ev = h.lastEval();
  assert.equal(ev.FailedTGAllocs?.web?.DimensionExhausted?.cpu, 1);
  assert.equal(ev.FailedTGAllocs?.web?.CoalescedFailures, 1);
  assert.equal(ev.QueuedAllocations?.web, 2);
  assert.equal(h.reblockedEvals.length, 1);
});

test('stopping a system job stops all its allocs', async () => {
  const h = setup(3);
  const job = mockSystemJob();
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  h.state.upsertJob({ ...job, Stop: true });
  await h.process(mockEval(job));
  assert.equal(planStopped(h.lastPlan()).length, 3);
});
