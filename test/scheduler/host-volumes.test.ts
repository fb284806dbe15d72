import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockEval, mockJob, mockNode, mockSystemJob } from '../mock/factories.js';
import type { ClientHostVolumeConfig, Job, Node, VolumeRequest } from '../../src/structs/index.js';
import type { HostVolume, HostVolumeCapability } from '../../src/structs/dynamic-host-volume.js';
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

/** A dynamic host volume on `nodeId`: its record in the store, and the node's fingerprint entry for it. */
function dynamicVolume(h: SchedulerHarness, nodeId: string, name: string, over: Partial<HostVolume> = {}): ClientHostVolumeConfig {
  const id = `0b5e8a3c-6f0e-4d52-9a37-${String(h.state.store.hostVolumes('*').length).padStart(12, '0')}`;
  const record: HostVolume = {
    Namespace: 'default', ID: id, Name: name, PluginID: 'mkdir', NodePool: 'default', NodeID: nodeId, Constraints: null,
    RequestedCapacityMinBytes: 0, RequestedCapacityMaxBytes: 0, CapacityBytes: 0,
    RequestedCapabilities: [{ AttachmentMode: 'file-system', AccessMode: 'single-node-writer' }],
    Parameters: null, HostPath: `/srv/volumes/${id}`, State: 'ready', CreateIndex: 1, CreateTime: 0, ModifyIndex: 1, ModifyTime: 0,
    ...over,
  };
  h.state.apply({ Type: 'HostVolumeUpsert', Volumes: [record], Now: 0 });
  return { Name: name, Path: record.HostPath, ReadOnly: false, ID: id, Namespace: record.Namespace };
}

function clusterWithDynamic(perNode: { name: string; over?: Partial<HostVolume>; forgotten?: boolean }[][]): SchedulerHarness {
  const h = new SchedulerHarness();
  perNode.forEach((vols, i) => {
    // A forgotten volume is one the node still offers after the servers deleted it.
    const offered = vols.map((v) => (v.forgotten ? { ...vol(v.name), ID: '0b5e8a3c-6f0e-4d52-9a37-ffffffffffff', Namespace: 'default' } : dynamicVolume(h, `node-${i}`, v.name, v.over)));
    h.state.upsertNode(mockNode({ ID: `node-${i}`, HostVolumes: Object.fromEntries(offered.map((v) => [v.Name, v])) }));
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
  const h = new SchedulerHarness();
  const dynamic = dynamicVolume(h, 'node-0', 'db', { Namespace: 'team-a' });
  h.state.upsertNode(mockNode({ ID: 'node-0', HostVolumes: { db: dynamic } }));
  h.state.upsertNode(mockNode({ ID: 'node-1', HostVolumes: { db: vol('db') } }));
  const other = { ...jobWith({ data: request('db') }, 2), ID: 'other', Name: 'other', Namespace: 'team-b' };
  await register(h, other);
  assert.deepEqual([...new Set(planPlaced(h.lastPlan()).map((a) => a.NodeID))], ['node-1'], 'team-b never lands on team-a\'s volume');
  const own = { ...jobWith({ data: request('db') }, 4), ID: 'own', Name: 'own', Namespace: 'team-a' };
  await register(h, own);
  assert.deepEqual([...new Set(planPlaced(h.lastPlan()).map((a) => a.NodeID))].sort(), ['node-0', 'node-1']);
});

const caps = (...modes: [string, string][]): HostVolumeCapability[] => modes.map(([AccessMode, AttachmentMode]) => ({ AccessMode, AttachmentMode }));

test('a dynamic host volume serves only requests one of its capabilities fits (Nomad\'s hostVolumeIsAvailable)', async () => {
  const h = clusterWithDynamic([
    [{ name: 'db', over: { RequestedCapabilities: caps(['single-node-reader-only', 'file-system']) } }],
    [{ name: 'db' }],
    [{ name: 'db', over: { RequestedCapabilities: caps(['single-node-writer', 'block-device']) } }],
    [{ name: 'db', forgotten: true }],
  ]);
  // No access mode: read-write claims single-node-writer on a file system.
  await register(h, jobWith({ data: request('db') }, 3));
  assert.deepEqual([...new Set(planPlaced(h.lastPlan()).map((a) => a.NodeID))], ['node-1']);
  assert.equal(planPlaced(h.lastPlan()).length, 3);

  // Read-only claims single-node-reader-only; only the reader volume has it.
  const ro = { ...jobWith({ data: request('db', { ReadOnly: true }) }, 2), ID: 'ro', Name: 'ro' };
  await register(h, ro);
  assert.deepEqual([...new Set(planPlaced(h.lastPlan()).map((a) => a.NodeID))], ['node-0']);

  // A reader-only access mode asked read-write fits no volume: unplaced with Nomad's reason.
  const bad = { ...jobWith({ data: request('db', { AccessMode: 'single-node-reader-only' }) }, 1), ID: 'bad', Name: 'bad' };
  await register(h, bad);
  assert.equal(h.state.allocsByJob('default', 'bad').length, 0);
  assert.deepEqual(h.lastEval().FailedTGAllocs?.web?.ConstraintFiltered, { 'missing compatible host volumes': 4 });

  // The block-device capability serves a request asking for it.
  const block = { ...jobWith({ data: request('db', { AccessMode: 'single-node-writer', AttachmentMode: 'block-device' }) }, 1), ID: 'block', Name: 'block' };
  await register(h, block);
  assert.deepEqual(planPlaced(h.lastPlan()).map((a) => a.NodeID), ['node-2']);
});

test('single-node-single-writer: a second writer of the volume is refused, on the same plan and from another job', async () => {
  const h = clusterWithDynamic([[{ name: 'ledger', over: { RequestedCapabilities: caps(['single-node-single-writer', 'file-system']) } }]]);
  const writer = request('ledger', { AccessMode: 'single-node-single-writer' });
  await register(h, jobWith({ data: writer }, 2));
  assert.equal(planPlaced(h.lastPlan()).length, 1, 'one writer; the second allocation of the group is a second writer');
  assert.deepEqual(h.lastEval().FailedTGAllocs?.web?.ConstraintFiltered, { 'missing compatible host volumes': 1 });

  const other = { ...jobWith({ data: writer }, 1), ID: 'other', Name: 'other' };
  await register(h, other);
  assert.equal(h.state.allocsByJob('default', 'other').length, 0, 'another job\'s writer is refused while the first runs');
  assert.deepEqual(h.lastEval().FailedTGAllocs?.web?.ConstraintFiltered, { 'missing compatible host volumes': 1 });

  // Once the first job stops, the volume is free for the other.
  const first = h.state.jobById('default', 'web')!;
  h.state.upsertJob({ ...first, Stop: true });
  await h.process(mockEval(first));
  for (const a of h.state.allocsByJob('default', 'web')) h.state.upsertAlloc({ ...a, ClientStatus: 'complete' });
  await h.process(mockEval(other));
  assert.deepEqual(h.state.allocsByJob('default', 'other').map((a) => a.NodeID), ['node-0']);
});

test('a volume\'s new capability is seen by the next evaluation, though no node changed', async () => {
  const h = clusterWithDynamic([[{ name: 'db' }]]);
  const multi = { ...jobWith({ data: request('db', { AccessMode: 'single-node-multi-writer' }) }, 1), ID: 'multi', Name: 'multi' };
  await register(h, multi);
  assert.equal(h.state.allocsByJob('default', 'multi').length, 0, 'the volume has no multi-writer capability yet');
  const vol = h.state.store.hostVolumes('*')[0]!;
  h.state.apply({ Type: 'HostVolumeUpsert', Volumes: [{ ...vol, RequestedCapabilities: [...vol.RequestedCapabilities, { AccessMode: 'single-node-multi-writer', AttachmentMode: 'file-system' }] }], Now: 0 });
  await h.process(mockEval(multi));
  assert.equal(h.state.allocsByJob('default', 'multi').length, 1);
});
