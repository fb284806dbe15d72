import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockAlloc, mockBatchJob, mockEval, mockJob, mockNode, mockTaskGroup, mockTask } from '../mock/factories.js';
import type { Job, Node } from '../../src/structs/index.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { SchedulerHarness, liveAllocs, planPlaced, planStopped } from './harness.js';

function cluster(n: number, overrides: Partial<Node> = {}): { h: SchedulerHarness; nodes: Node[] } {
  const h = new SchedulerHarness();
  const nodes: Node[] = [];
  for (let i = 0; i < n; i++) {
    const node = mockNode({ ID: `node-${String(i).padStart(3, '0')}`, ...overrides });
    h.state.upsertNode(node);
    nodes.push(node);
  }
  return { h, nodes };
}

async function register(h: SchedulerHarness, job: Job): Promise<void> {
  h.state.upsertJob(job);
  await h.process(mockEval(job));
}

function withCount(job: Job, count: number): Job {
  return { ...job, TaskGroups: job.TaskGroups.map((g) => ({ ...g, Count: count })) };
}

test('places every allocation of a new service job', async () => {
  const { h } = cluster(10);
  const job = mockJob();
  await register(h, job);
  const placed = planPlaced(h.lastPlan());
  const stored = h.state.jobById('default', 'web')!;
  assert.equal(placed.length, 10);
  assert.deepEqual(placed.map((a) => a.Name).sort(), Array.from({ length: 10 }, (_, i) => `web.web[${i}]`).sort());
  for (const a of placed) {
    assert.equal(a.ClientStatus, 'pending');
    assert.equal(a.DesiredStatus, 'run');
    assert.equal(a.Job, placed[0]!.Job, 'allocs share one job object');
    assert.equal(a.Job?.JobModifyIndex, stored.JobModifyIndex, 'the registered version');
    assert.equal(a.AllocatedResources?.Tasks.web?.Cpu.CpuShares, 500);
    assert.equal(a.AllocatedResources?.Shared.DiskMB, 150);
    assert.equal(a.CreateTime, h.now * 1_000_000);
    assert.ok(a.Metrics && a.Metrics.NodesEvaluated >= 2);
  }
  const ev = h.lastEval();
  assert.equal(ev.Status, 'complete');
  assert.equal(ev.FailedTGAllocs, null);
  assert.deepEqual(ev.QueuedAllocations, { web: 0 });
  assert.equal(h.lastPlan().Annotations?.DesiredTGUpdates.web?.Place, 10);
});

test('scales up at the lowest free indexes and down from the highest', async () => {
  const { h } = cluster(5);
  const job = withCount(mockJob(), 3);
  await register(h, job);
  const up = withCount(job, 5);
  await register(h, up);
  const placedUp = planPlaced(h.lastPlan()).filter((a) => a.PreviousAllocation === '' && a.CreateTime > 0 && a.Job === h.state.jobById('default', 'web') && a.Name.match(/\[(3|4)\]/));
  assert.equal(placedUp.length, 2);
  assert.equal(h.lastPlan().Annotations?.DesiredTGUpdates.web?.Place, 2);
  const down = withCount(up, 2);
  await register(h, down);
  const stopped = planStopped(h.lastPlan());
  assert.deepEqual(stopped.map((a) => a.Name).sort(), ['web.web[2]', 'web.web[3]', 'web.web[4]']);
  for (const a of stopped) assert.equal(a.DesiredDescription, 'alloc not needed due to job update');
  assert.deepEqual(liveAllocs(h, 'web').map((a) => a.Name).sort(), ['web.web[0]', 'web.web[1]']);
});

const updateCases: { name: string; change: (j: Job) => Job; inplace: boolean }[] = [
  { name: 'kill timeout only', inplace: true, change: (j) => ({ ...j, TaskGroups: [{ ...j.TaskGroups[0]!, Tasks: [mockTask({ KillTimeout: 99 })] }] }) },
  { name: 'restart policy only', inplace: true, change: (j) => ({ ...j, TaskGroups: [{ ...j.TaskGroups[0]!, RestartPolicy: { Attempts: 9, Interval: 1, Delay: 1, Mode: 'delay' } }] }) },
  { name: 'task config', inplace: false, change: (j) => ({ ...j, TaskGroups: [{ ...j.TaskGroups[0]!, Tasks: [mockTask({ Config: { run_for: '20s' } })] }] }) },
  { name: 'task env', inplace: false, change: (j) => ({ ...j, TaskGroups: [{ ...j.TaskGroups[0]!, Tasks: [mockTask({ Env: { FOO: 'baz' } })] }] }) },
  { name: 'job meta', inplace: false, change: (j) => ({ ...j, Meta: { owner: 'someone' } }) },
  { name: 'driver', inplace: false, change: (j) => ({ ...j, TaskGroups: [{ ...j.TaskGroups[0]!, Tasks: [mockTask({ Driver: 'raw_exec' })] }] }) },
  { name: 'memory', inplace: false, change: (j) => ({ ...j, TaskGroups: [{ ...j.TaskGroups[0]!, Tasks: [mockTask({ Resources: { ...mockTask().Resources, MemoryMB: 300 } })] }] }) },
  { name: 'ephemeral disk', inplace: false, change: (j) => ({ ...j, TaskGroups: [{ ...j.TaskGroups[0]!, EphemeralDisk: { Sticky: false, Migrate: false, SizeMB: 300 } }] }) },
];

for (const c of updateCases) {
  test(`job update (${c.name}) is ${c.inplace ? 'in place' : 'destructive'}`, async () => {
    const { h } = cluster(10);
    const job = withCount(mockJob(), 4);
    await register(h, job);
    const before = liveAllocs(h, 'web');
    const next = c.change(job);
    await register(h, next);
    const plan = h.lastPlan();
    const du = plan.Annotations!.DesiredTGUpdates.web!;
    if (c.inplace) {
      assert.equal(du.InPlaceUpdate, 4);
      assert.equal(planStopped(plan).length, 0);
      const updated = planPlaced(plan);
      assert.deepEqual(updated.map((a) => a.ID).sort(), before.map((a) => a.ID).sort());
      for (const a of updated) assert.equal(a.Job, h.state.jobById('default', 'web'));
      assert.equal(h.state.jobById('default', 'web')!.JobModifyIndex, next.JobModifyIndex, 'the updated version');
    } else {
      assert.equal(du.DestructiveUpdate, 4);
      assert.equal(planStopped(plan).length, 4);
      for (const a of planStopped(plan)) assert.equal(a.DesiredDescription, 'alloc is being updated due to job update');
      const placed = planPlaced(plan);
      assert.equal(placed.length, 4);
      assert.deepEqual(placed.map((a) => a.PreviousAllocation).sort(), before.map((a) => a.ID).sort());
    }
  });
}

test('allocations on a down node are lost and replaced', async () => {
  const { h, nodes } = cluster(4);
  const job = withCount(mockJob(), 4);
  await register(h, job);
  const down = nodes.find((n) => h.state.allocsByNode(n.ID).length > 0)!;
  const onDown = h.state.allocsByNode(down.ID);
  h.state.upsertNode({ ...down, Status: 'down' });
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: down.ID }));
  const plan = h.lastPlan();
  const stopped = planStopped(plan);
  assert.equal(stopped.length, onDown.length);
  for (const a of stopped) {
    assert.equal(a.ClientStatus, 'lost');
    assert.equal(a.DesiredStatus, 'stop');
    assert.equal(a.DesiredDescription, 'alloc is lost since its node is down');
  }
  const placed = planPlaced(plan);
  assert.equal(placed.length, onDown.length);
  for (const a of placed) assert.notEqual(a.NodeID, down.ID);
  assert.deepEqual(placed.map((a) => a.Name).sort(), onDown.map((a) => a.Name).sort());
});

test('a failed alloc past its reschedule delay is replaced now with a tracker', async () => {
  const { h, nodes } = cluster(3);
  const job = withCount(mockJob(), 1);
  h.state.upsertJob(job);
  const failedAt = new Date(h.now - 60_000).toISOString();
  const failed = mockAlloc(job, nodes[0]!, {
    ID: 'failed-1', ClientStatus: 'failed',
    TaskStates: { web: { State: 'dead', Failed: true, Restarts: 2, LastRestart: null, StartedAt: null, FinishedAt: failedAt, Events: [] } },
  });
  h.state.upsertAlloc(failed);
  await h.process(mockEval(job, { TriggeredBy: 'alloc-failure' }));
  const plan = h.lastPlan();
  const placed = planPlaced(plan);
  assert.equal(placed.length, 1);
  const repl = placed[0]!;
  assert.equal(repl.PreviousAllocation, 'failed-1');
  assert.equal(repl.Name, failed.Name);
  assert.equal(repl.RescheduleTracker?.Events.length, 1);
  assert.equal(repl.RescheduleTracker?.Events[0]?.PrevAllocID, 'failed-1');
  assert.equal(repl.RescheduleTracker?.Events[0]?.Delay, 30_000_000_000);
  const old = planStopped(plan).find((a) => a.ID === 'failed-1');
  assert.equal(old?.NextAllocation, repl.ID);
  assert.equal(h.state.allocById('failed-1')?.NextAllocation, repl.ID);
});

test('a failed alloc within its delay gets a follow-up eval with WaitUntil', async () => {
  const { h, nodes } = cluster(3);
  const job = withCount(mockJob(), 1);
  h.state.upsertJob(job);
  const failed = mockAlloc(job, nodes[0]!, {
    ID: 'failed-2', ClientStatus: 'failed',
    TaskStates: { web: { State: 'dead', Failed: true, Restarts: 2, LastRestart: null, StartedAt: null, FinishedAt: new Date(h.now).toISOString(), Events: [] } },
  });
  h.state.upsertAlloc(failed);
  const ev = mockEval(job, { TriggeredBy: 'alloc-failure' });
  await h.process(ev);
  assert.equal(h.createdEvals.length, 1);
  const follow = h.createdEvals[0]!;
  assert.equal(follow.WaitUntil, new Date(h.now + 30_000).toISOString());
  assert.equal(follow.PreviousEval, ev.ID);
  assert.equal(follow.Status, 'pending');
  const plan = h.lastPlan();
  assert.equal(planPlaced(plan).filter((a) => a.ID !== 'failed-2').length, 0);
  assert.equal(h.state.allocById('failed-2')?.FollowupEvalID, follow.ID);

  // Processing the follow-up eval later reschedules.
  h.now += 31_000;
  await h.process({ ...follow, Status: 'pending' });
  const placed = planPlaced(h.lastPlan()).filter((a) => a.PreviousAllocation === 'failed-2');
  assert.equal(placed.length, 1);
});

test('exponential reschedule delays double up to MaxDelay; attempts are bounded', async () => {
  const { rescheduleDecision } = await import('../../src/scheduler/reschedule.js');
  const job = mockBatchJob();
  const node = mockNode();
  const base = mockAlloc(job, node, { ClientStatus: 'failed', ModifyTime: 1_000 * 1_000_000 });
  const policy = { Attempts: 2, Interval: 3_600_000_000_000, Delay: 10_000_000_000, DelayFunction: 'exponential' as const, MaxDelay: 25_000_000_000, Unlimited: false };
  assert.equal(rescheduleDecision(base, policy, 2_000).delay, 10_000_000_000);
  const one = { ...base, RescheduleTracker: { Events: [{ RescheduleTime: 1_500 * 1_000_000, PrevAllocID: 'a', PrevNodeID: 'n', Delay: 10_000_000_000 }] } };
  assert.equal(rescheduleDecision(one, policy, 2_000).delay, 20_000_000_000);
  const two = { ...one, RescheduleTracker: { Events: [...one.RescheduleTracker.Events, { RescheduleTime: 1_800 * 1_000_000, PrevAllocID: 'b', PrevNodeID: 'n', Delay: 20_000_000_000 }] } };
  assert.equal(rescheduleDecision(two, policy, 2_000).eligible, false);
  assert.equal(rescheduleDecision(two, { ...policy, Attempts: 5 }, 2_000).delay, 25_000_000_000);
  assert.equal(rescheduleDecision(two, { ...policy, DelayFunction: 'fibonacci', Attempts: 5, MaxDelay: 0 }, 2_000).delay, 30_000_000_000);
});

test('batch allocs that completed are not replaced', async () => {
  const { h, nodes } = cluster(3);
  const job = withCount(mockBatchJob(), 2);
  h.state.upsertJob(job);
  h.state.upsertAlloc(mockAlloc(job, nodes[0]!, { Name: 'batch.web[0]', ClientStatus: 'complete' }));
  h.state.upsertAlloc(mockAlloc(job, nodes[1]!, { Name: 'batch.web[1]', ClientStatus: 'running' }));
  await h.process(mockEval(job));
  assert.equal(h.plans.length, 0, 'nothing to do');
  assert.equal(h.lastEval().Status, 'complete');
});

test('a completed service alloc is replaced', async () => {
  const { h, nodes } = cluster(3);
  const job = withCount(mockJob(), 1);
  h.state.upsertJob(job);
  h.state.upsertAlloc(mockAlloc(job, nodes[0]!, { ID: 'done', Name: 'web.web[0]', ClientStatus: 'complete' }));
  await h.process(mockEval(job));
  const placed = planPlaced(h.lastPlan());
  assert.equal(placed.length, 1);
  assert.equal(placed[0]!.Name, 'web.web[0]');
  assert.equal(placed[0]!.PreviousAllocation, 'done');
});

test('a stopped or deregistered job stops everything', async () => {
  const { h } = cluster(3);
  const job = withCount(mockJob(), 3);
  await register(h, job);
  await register(h, { ...job, Stop: true });
  assert.equal(planStopped(h.lastPlan()).length, 3);
  assert.equal(liveAllocs(h, 'web').length, 0);

  const { h: h2 } = cluster(3);
  await register(h2, job);
  h2.state.deleteJob('default', 'web');
  await h2.process(mockEval(job, { TriggeredBy: 'job-deregister' }));
  assert.equal(planStopped(h2.lastPlan()).length, 3);
});

test('no feasible node: blocked eval, FailedTGAllocs explain constraint filtering', async () => {
  const { h } = cluster(4, { Attributes: { 'kernel.name': 'windows' } });
  const job = withCount(mockJob(), 3);
  await register(h, job);
  const ev = h.lastEval();
  assert.equal(ev.Status, 'complete');
  const m = ev.FailedTGAllocs?.web;
  assert.ok(m);
  assert.equal(m.NodesEvaluated, 4);
  assert.equal(m.NodesFiltered, 4);
  assert.deepEqual(m.ConstraintFiltered, { '${attr.kernel.name} = linux': 4 });
  assert.equal(m.CoalescedFailures, 2);
  assert.deepEqual(ev.QueuedAllocations, { web: 3 });
  assert.equal(h.reblockedEvals.length, 1);
  const blocked = h.reblockedEvals[0]!;
  assert.equal(blocked.Status, 'blocked');
  assert.equal(blocked.PreviousEval, ev.ID);
  assert.equal(ev.BlockedEval, blocked.ID);
});

test('exhausted resources are reported by dimension', async () => {
  const { h } = cluster(2);
  const job = withCount(mockJob(), 1);
  job.TaskGroups[0]!.Tasks[0]!.Resources.MemoryMB = 100_000;
  await register(h, job);
  const m = h.lastEval().FailedTGAllocs?.web;
  assert.equal(m?.NodesExhausted, 2);
  assert.deepEqual(m?.DimensionExhausted, { memory: 2 });

  const { h: h2 } = cluster(2);
  const cpuJob = withCount(mockJob(), 20);
  await register(h2, cpuJob);
  const m2 = h2.lastEval().FailedTGAllocs?.web;
  // 3900 MHz schedulable per node: 7 allocs of 500 fit on each.
  assert.equal(planPlaced(h2.lastPlan()).length, 14);
  assert.equal(m2?.DimensionExhausted?.cpu, 2);
  assert.equal(h2.lastEval().QueuedAllocations?.web, 6);
});

test('missing drivers are reported as such', async () => {
  const { h } = cluster(2);
  const job = withCount(mockJob(), 1);
  job.TaskGroups[0]!.Tasks[0]!.Driver = 'docker';
  await register(h, job);
  assert.deepEqual(h.lastEval().FailedTGAllocs?.web?.ConstraintFiltered, { 'missing drivers': 2 });
});

test('bridge-mode groups go only to nodes with the bridge CNI plugins; their `to` ports do not collide', async () => {
  const bridgeGroup = (job: Job, count: number): Job => withCount({
    ...job,
    TaskGroups: job.TaskGroups.map((g) => ({
      ...g,
      Networks: [{ Mode: 'bridge', Device: '', CIDR: '', IP: '', MBits: 0, DNS: null, ReservedPorts: null, DynamicPorts: [{ Label: 'http', Value: 0, To: 8080, HostNetwork: 'default' }] }],
    })),
  }, count);
  const { h } = cluster(2);
  await register(h, bridgeGroup(mockJob(), 1));
  assert.deepEqual(h.lastEval().FailedTGAllocs?.web?.ConstraintFiltered, { 'missing network': 2 });

  const cni = Object.fromEntries(['bridge', 'host-local', 'loopback', 'firewall', 'portmap'].map((p) => [`plugins.cni.version.${p}`, 'v1.1.1']));
  const one = mockNode({ ID: 'node-cni' });
  const { h: h2 } = cluster(0);
  h2.state.upsertNode({ ...one, Attributes: { ...one.Attributes, ...cni } });
  await register(h2, bridgeGroup(mockJob(), 3));
  const placed = planPlaced(h2.lastPlan());
  assert.equal(placed.length, 3, 'three allocations asking for to = 8080 fit on one node');
  const ports = placed.map((a) => a.AllocatedResources!.Shared.Ports![0]!);
  assert.equal(new Set(ports.map((p) => p.Value)).size, 3, 'each has a host port of its own');
  assert.ok(ports.every((p) => p.To === 8080));
});

test('a partial commit makes the scheduler refresh and retry', async () => {
  const { h, nodes } = cluster(3);
  const job = withCount(mockJob(), 6);
  for (const n of nodes) h.rejectNodeOnce.add(n.ID);
  h.rejectNodeOnce.delete(nodes[2]!.ID);
  await register(h, job);
  assert.ok(h.plans.length >= 2, `expected a retry, got ${h.plans.length} plans`);
  assert.equal(liveAllocs(h, 'web').length, 6);
  assert.equal(h.lastEval().Status, 'complete');
  const names = liveAllocs(h, 'web').map((a) => a.Name).sort();
  assert.deepEqual(names, Array.from({ length: 6 }, (_, i) => `web.web[${i}]`).sort());
});

test('static port collisions exhaust a node; dynamic ports are distinct', async () => {
  const { h } = cluster(2);
  const job = withCount(mockJob(), 3);
  job.TaskGroups[0]!.Networks = [{
    Mode: 'host', Device: '', CIDR: '', IP: '', MBits: 0, DNS: null,
    ReservedPorts: [{ Label: 'http', Value: 8080, To: 0, HostNetwork: 'default' }],
    DynamicPorts: [{ Label: 'admin', Value: 0, To: 0, HostNetwork: 'default' }],
  }];
  await register(h, job);
  const placed = planPlaced(h.lastPlan());
  assert.equal(placed.length, 2);
  assert.notEqual(placed[0]!.NodeID, placed[1]!.NodeID);
  for (const a of placed) {
    const ports = a.AllocatedResources!.Shared.Ports!;
    assert.equal(ports.find((p) => p.Label === 'http')?.Value, 8080);
    const admin = ports.find((p) => p.Label === 'admin')!.Value;
    assert.ok(admin >= 20000 && admin <= 32000);
  }
  assert.equal(h.lastEval().FailedTGAllocs?.web?.DimensionExhausted?.['network: reserved port collision'], 2);
});

test('affinity steers placements; spread balances across datacenters', async () => {
  const h = new SchedulerHarness();
  for (let i = 0; i < 6; i++) h.state.upsertNode(mockNode({ ID: `n${i}`, Datacenter: i < 3 ? 'dc1' : 'dc2' }));
  const job = withCount(mockJob({ Datacenters: ['dc*'] }), 3);
  job.Affinities = [{ LTarget: '${node.datacenter}', RTarget: 'dc2', Operand: '=', Weight: 100 }];
  await register(h, job);
  for (const a of planPlaced(h.lastPlan())) assert.ok(['n3', 'n4', 'n5'].includes(a.NodeID), a.NodeID);

  const h2 = new SchedulerHarness();
  for (let i = 0; i < 6; i++) h2.state.upsertNode(mockNode({ ID: `n${i}`, Datacenter: i < 3 ? 'dc1' : 'dc2' }));
  const spread = withCount(mockJob({ Datacenters: ['dc1', 'dc2'] }), 6);
  spread.Spreads = [{ Attribute: '${node.datacenter}', Weight: 100, SpreadTarget: [{ Value: 'dc1', Percent: 50 }, { Value: 'dc2', Percent: 50 }] }];
  await register(h2, spread);
  const placed = planPlaced(h2.lastPlan());
  const dc1 = placed.filter((a) => ['n0', 'n1', 'n2'].includes(a.NodeID)).length;
  assert.equal(dc1, 3);
  assert.equal(placed.length - dc1, 3);
});

test('distinct_hosts puts at most one alloc of the job per node', async () => {
  const { h } = cluster(3);
  const job = withCount(mockJob(), 5);
  job.Constraints = [{ LTarget: '', RTarget: 'true', Operand: 'distinct_hosts' }];
  await register(h, job);
  const placed = planPlaced(h.lastPlan());
  assert.equal(new Set(placed.map((a) => a.NodeID)).size, 3);
  assert.equal(placed.length, 3);
  assert.equal(h.lastEval().FailedTGAllocs?.web?.ConstraintFiltered?.[' distinct_hosts true'.trim()], 3);
});

test('datacenters and node pools restrict candidates', async () => {
  const h = new SchedulerHarness();
  h.state.upsertNode(mockNode({ ID: 'a', Datacenter: 'east-1' }));
  h.state.upsertNode(mockNode({ ID: 'b', Datacenter: 'west-1' }));
  h.state.upsertNode(mockNode({ ID: 'c', Datacenter: 'east-2', NodePool: 'gpu' }));
  await register(h, withCount(mockJob({ Datacenters: ['east-*'] }), 2));
  assert.deepEqual(planPlaced(h.lastPlan()).map((a) => a.NodeID), ['a', 'a']);
  assert.equal(h.lastEval().QueuedAllocations?.web, 0);
  const h2 = new SchedulerHarness();
  h2.state.upsertNode(mockNode({ ID: 'a', Datacenter: 'east-1' }));
  h2.state.upsertNode(mockNode({ ID: 'c', Datacenter: 'east-2', NodePool: 'gpu' }));
  await register(h2, withCount(mockJob({ Datacenters: ['*'], NodePool: 'all', TaskGroups: [mockTaskGroup({ Count: 2, Constraints: [{ LTarget: '', RTarget: 'true', Operand: 'distinct_hosts' }] })] }), 2));
  assert.equal(planPlaced(h2.lastPlan()).length, 2);
});

test('memory_max reaches the allocation only with memory oversubscription on (Nomad ignores it otherwise)', async () => {
  const withMax = (): Job => {
    const job = withCount(mockJob(), 1);
    job.TaskGroups[0]!.Tasks[0]!.Resources.MemoryMaxMB = 1024;
    return job;
  };
  const { h } = cluster(1);
  await register(h, withMax());
  const off = planPlaced(h.lastPlan())[0]!;
  assert.equal(Object.values(off.AllocatedResources!.Tasks)[0]!.Memory.MemoryMaxMB, 0);

  const on = cluster(1).h;
  on.state.apply({ Type: 'SchedulerConfigSet', Config: { ...on.state.store.schedulerConfig(), MemoryOversubscriptionEnabled: true }, Now: 1 } as unknown as Command);
  await register(on, withMax());
  assert.equal(Object.values(planPlaced(on.lastPlan())[0]!.AllocatedResources!.Tasks)[0]!.Memory.MemoryMaxMB, 1024);
});
