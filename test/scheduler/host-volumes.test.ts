import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockEval, mockJob, mockNode, mockSystemJob } from '../mock/factories.js';
import type { ClientHostVolumeConfig, Job, Node, VolumeRequest } from '../../src/structs/index.js';
import { SchedulerHarness, planPlaced } from './harness.js';

function vol(name: string, readOnly = false): ClientHostVolumeConfig {
  return { Name: name, Path: `/srv/${name}`, ReadOnly: readOnly };
}

function request(source: string, over: Partial<VolumeRequest> = {}): VolumeRequest {
  return { Name: 'data', Type: 'host', Source: source, ReadOnly: false, Sticky: false, AccessMode: '', AttachmentMode: '', MountOptions: null, PerAlloc: false, ...over };
}

function jobWith(volumes: Record<string, VolumeRequest>, count: number): Job {
  const job = mockJob();
  return { ...job, TaskGroups: job.TaskGroups.map((g) => ({ ...g, Count: count, Volumes: volumes })) };
}

function cluster(volumesByNode: (ClientHostVolumeConfig[] | undefined)[]): SchedulerHarness {
  const h = new SchedulerHarness();
  volumesByNode.forEach((vols, i) => {
    const node: Node = mockNode({ ID: `node-${i}`, ...(vols ? { HostVolumes: Object.fromEntries(vols.map((v) => [v.Name, v])) } : {}) });
    h.state.upsertNode(node);
  });
  return h;
}

async function register(h: SchedulerHarness, job: Job): Promise<void> {
  h.state.upsertJob(job);
  await h.process(mockEval(job));
}

test('a group asking for a host volume is placed only on the nodes offering it', async () => {
  const h = cluster([undefined, [vol('db')], undefined, [vol('other')], [vol('db')]]);
  await register(h, jobWith({ data: request('db') }, 6));
  const placed = planPlaced(h.lastPlan());
  assert.equal(placed.length, 6);
  assert.deepEqual([...new Set(placed.map((a) => a.NodeID))].sort(), ['node-1', 'node-4']);
});

test('a group asking for a volume no node has stays unplaced with Nomad\'s filter reason', async () => {
  const h = cluster([undefined, [vol('other')], [vol('other2')]]);
  await register(h, jobWith({ data: request('missing') }, 2));
  assert.equal(h.state.allocsByJob('default', 'web').length, 0);
  const failed = h.lastEval().FailedTGAllocs?.web;
  assert.ok(failed, 'the group failed to place');
  assert.equal(failed.NodesEvaluated, 3);
  assert.equal(failed.NodesFiltered, 3);
  assert.deepEqual(failed.ConstraintFiltered, { 'missing compatible host volumes': 3 });
  assert.equal(failed.CoalescedFailures, 1);
});

test('a read-only host volume serves read-only requests only', async () => {
  const h = cluster([[vol('db', true)], [vol('db')]]);
  await register(h, jobWith({ data: request('db') }, 3));
  assert.deepEqual([...new Set(planPlaced(h.lastPlan()).map((a) => a.NodeID))], ['node-1'], 'a read-write request skips the read-only volume');

  const h2 = cluster([[vol('db', true)], undefined]);
  const ro = { ...jobWith({ data: request('db', { ReadOnly: true }) }, 2), ID: 'ro', Name: 'ro' };
  await register(h2, ro);
  assert.deepEqual([...new Set(planPlaced(h2.lastPlan()).map((a) => a.NodeID))], ['node-0'], 'a read-only request may use it');
});

test('per_alloc: each allocation goes where its own indexed volume is', async () => {
  const h = cluster([[vol('db[1]')], [vol('db[0]')], [vol('db[2]')], [vol('db')]]);
  await register(h, jobWith({ data: request('db', { PerAlloc: true }) }, 3));
  const placed = planPlaced(h.lastPlan());
  assert.equal(placed.length, 3);
  const where = Object.fromEntries(placed.map((a) => [a.Name, a.NodeID]));
  assert.deepEqual(where, { 'web.web[0]': 'node-1', 'web.web[1]': 'node-0', 'web.web[2]': 'node-2' });
});

test('per_alloc: an index without its volume is unplaced, the others are placed', async () => {
  const h = cluster([[vol('db[0]')], [vol('db')]]);
  await register(h, jobWith({ data: request('db', { PerAlloc: true }) }, 2));
  const placed = planPlaced(h.lastPlan());
  assert.deepEqual(placed.map((a) => [a.Name, a.NodeID]), [['web.web[0]', 'node-0']]);
  assert.deepEqual(h.lastEval().FailedTGAllocs?.web?.ConstraintFiltered, { 'missing compatible host volumes': 2 });
});

test('a system job with a host volume runs only on the nodes offering it', async () => {
  const h = cluster([[vol('logs')], undefined, [vol('logs')]]);
  const sys = mockSystemJob();
  const job: Job = { ...sys, TaskGroups: sys.TaskGroups.map((g) => ({ ...g, Volumes: { data: request('logs') } })) };
  await register(h, job);
  assert.deepEqual(planPlaced(h.lastPlan()).map((a) => a.NodeID).sort(), ['node-0', 'node-2']);
});

test('a dynamic host volume serves jobs of its own namespace only (static ones serve every namespace)', async () => {
  const dynamic: ClientHostVolumeConfig = { ...vol('db'), ID: '0b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b', Namespace: 'team-a' };
  const h = cluster([[dynamic], [vol('db')]]);
  const other = { ...jobWith({ data: request('db') }, 2), ID: 'other', Name: 'other', Namespace: 'team-b' };
  await register(h, other);
  assert.deepEqual([...new Set(planPlaced(h.lastPlan()).map((a) => a.NodeID))], ['node-1'], 'team-b never lands on team-a\'s volume');
  const own = { ...jobWith({ data: request('db') }, 4), ID: 'own', Name: 'own', Namespace: 'team-a' };
  await register(h, own);
  assert.deepEqual([...new Set(planPlaced(h.lastPlan()).map((a) => a.NodeID))].sort(), ['node-0', 'node-1']);
});
