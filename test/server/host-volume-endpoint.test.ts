/**
 * Dynamic host volumes on the server, over a real state store and FSM: placement (pool,
 * constraints, plugin attribute, one name per node), the wait for the node's report (created,
 * failed, timed out), the ready state from the node's fingerprint, delete refused while an
 * allocation claims the volume, and the table surviving serialize/restore and the snapshot.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { HostVolumeEndpoint } from '../../src/server/endpoints/host-volume-endpoint.js';
import type { EndpointContext } from '../../src/server/endpoints/endpoint-context.js';
import { captureState, encodeSnapshot } from '../../src/server/snapshot/snapshot-encoder.js';
import { decodeSnapshot } from '../../src/server/snapshot/snapshot-decoder.js';
import { FakeClock } from '../../src/time/clock.js';
import type { Node } from '../../src/structs/index.js';
import { hasErrorCode } from '../../src/structs/caravan-error.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { nodeCmd, placeCmd, registerCmd, mockEval } from './fsm-helpers.js';

const WITH_MKDIR = { 'plugins.host_volume.mkdir.version': '0.0.1' };

function harness(waitMs = 5_000) {
  const state = new StateStore();
  const fsm = new Fsm(state);
  const clock = new FakeClock();
  let index = 0;
  const apply = (cmd: Command): number => {
    index++;
    fsm.apply(cmd, index);
    return index;
  };
  const ctx = {
    config: {},
    store: state,
    clock,
    random: () => 0,
    factoryFor: () => undefined,
    apply: async (cmd: Command) => apply(cmd),
    resetHeartbeat: () => 10_000,
    variableLocks: () => {
      throw new Error('unused');
    },
    clearHeartbeat: () => undefined,
    nowNanos: () => clock.now() * 1_000_000,
  } as unknown as EndpointContext;
  const ep = new HostVolumeEndpoint(ctx, waitMs);
  const node = (over: Partial<Node> = {}): Node => {
    const n = mockNode({ ...over, Attributes: { ...mockNode().Attributes, ...WITH_MKDIR, ...over.Attributes } });
    apply(nodeCmd(n));
    return n;
  };
  /** The client's side: runs "the plugin" and re-registers its node with the volume, then reports. */
  const clientCreates = async (n: Node, error?: string) => {
    for (let i = 0; i < 50 && state.hostVolumesByNode(n.ID).every((v) => v.HostPath !== ''); i++) await new Promise((r) => setImmediate(r));
    const v = state.hostVolumesByNode(n.ID).find((x) => x.HostPath === '')!;
    if (error) return ep.reportFromClient({ ID: v.ID, Op: 'create', Error: error }, n.SecretID);
    const path = `/srv/host_volumes/${v.ID}`;
    const cur = state.nodeById(n.ID)!;
    apply(nodeCmd({ ...cur, HostVolumes: { ...cur.HostVolumes, [v.Name]: { Name: v.Name, Path: path, ReadOnly: false, ID: v.ID } } }));
    return ep.reportFromClient({ ID: v.ID, Op: 'create', HostPath: path }, n.SecretID);
  };
  return { state, clock, ep, node, apply, clientCreates };
}

describe('dynamic host volume endpoint', () => {
  it('places on a node meeting pool, constraints and plugin; answers once the node reported; ready from its fingerprint', async () => {
    const h = harness();
    h.node({ NodePool: 'other' });
    h.node({ Attributes: { 'kernel.name': 'darwin' } });
    const noPlugin = mockNode();
    h.apply(nodeCmd(noPlugin));
    const good = h.node();
    const spec = { Name: 'data', NodePool: 'default', Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }] };
    const creating = h.ep.create({ Volume: spec }, 'default');
    await h.clientCreates(good);
    const { volume } = await creating;
    assert.equal(volume?.NodeID, good.ID);
    assert.equal(volume?.State, 'ready');
    assert.equal(volume?.PluginID, 'mkdir');
    assert.equal(volume?.HostPath, `/srv/host_volumes/${volume?.ID}`);
    assert.deepEqual(volume?.RequestedCapabilities, [{ AttachmentMode: 'file-system', AccessMode: 'single-node-writer' }]);
    // The node stops offering it: unavailable; offers it again: ready.
    const cur = h.state.nodeById(good.ID)!;
    h.apply(nodeCmd({ ...cur, HostVolumes: {} }));
    assert.equal(h.state.hostVolumeById(volume!.ID)?.State, 'unavailable');
    h.apply(nodeCmd(cur));
    assert.equal(h.state.hostVolumeById(volume!.ID)?.State, 'ready');
    // A second volume of that name has no node left (the one that fits already has one).
    await assert.rejects(h.ep.create({ Volume: spec }, 'default'), (e) => hasErrorCode(e, 'HOST_VOLUME_NO_NODE') && /no node meets constraints/.test(e.message));
  });

  it('removes the volume and answers the plugin\'s error when the node fails to create it', async () => {
    const h = harness();
    const n = h.node();
    const creating = h.ep.create({ Volume: { Name: 'data', Parameters: { mode: '0750' } } }, 'default');
    await h.clientCreates(n, 'disk on fire');
    await assert.rejects(creating, (e) => hasErrorCode(e, 'HOST_VOLUME_PLUGIN_FAILED') && /disk on fire/.test(e.message));
    assert.deepEqual(h.state.hostVolumes('*'), []);
  });

  it('keeps the volume as it was when the node fails an update (its directory and data are still on the node)', async () => {
    const h = harness();
    const n = h.node();
    const creating = h.ep.create({ Volume: { Name: 'data', Parameters: { mode: '0750' } } }, 'default');
    await h.clientCreates(n);
    const { volume: made } = await creating;
    const updating = h.ep.create({ Volume: { ID: made!.ID, Name: 'data', Parameters: { mode: '0700' } } }, 'default');
    await h.clientCreates(n, 'chmod refused');
    await assert.rejects(updating, (e) => hasErrorCode(e, 'HOST_VOLUME_PLUGIN_FAILED') && /chmod refused/.test(e.message));
    const after = h.state.hostVolumes('*');
    assert.equal(after.length, 1, 'not forgotten');
    assert.deepEqual([after[0]!.ID, after[0]!.HostPath, after[0]!.State, after[0]!.Parameters], [made!.ID, made!.HostPath, 'ready', { mode: '0750' }]);
  });

  it('refuses to delete a namespace that still holds host volumes, as Nomad', async () => {
    const h = harness();
    const n = h.node();
    h.apply({ Type: 'NamespaceUpsert', Namespaces: [{ Name: 'team-a', Description: '', Quota: '', Capabilities: null, NodePoolConfiguration: null, Meta: null, CreateIndex: 0, ModifyIndex: 0 }], Now: 0 });
    const creating = h.ep.create({ Volume: { Name: 'data', Namespace: 'team-a' } }, 'team-a');
    await h.clientCreates(n);
    await creating;
    assert.throws(
      () => h.apply({ Type: 'NamespaceDelete', Names: ['team-a'], Now: 0 }),
      (e: unknown) => hasErrorCode(e, 'NAMESPACE_HAS_VOLUMES') && (e as Error).message === 'namespace "team-a" has volumes associated with it in regions: [global]',
    );
    assert.ok(h.state.namespaceByName('team-a'), 'the namespace is kept');
  });

  it('answers a timeout when the node never reports, leaving the volume pending for it', async () => {
    const h = harness(1_000);
    h.node();
    const creating = h.ep.create({ Volume: { Name: 'data' } }, 'default');
    await new Promise((r) => setImmediate(r));
    h.clock.advance(1_000);
    await assert.rejects(creating, (e) => hasErrorCode(e, 'HOST_VOLUME_TIMEOUT'));
    assert.equal(h.state.hostVolumes('*')[0]?.State, 'pending');
  });

  it('refuses a delete while an allocation claims the volume by name, and deletes once the node removed it', async () => {
    const h = harness();
    const n = h.node();
    const creating = h.ep.create({ Volume: { Name: 'data' } }, 'default');
    await h.clientCreates(n);
    const vol = (await creating).volume!;
    const job = mockJob({ ID: 'web' });
    job.TaskGroups[0]!.Volumes = { d: { Name: 'd', Type: 'host', Source: 'data', ReadOnly: false, Sticky: false, AccessMode: '', AttachmentMode: '', MountOptions: null, PerAlloc: false } };
    h.apply(registerCmd(job, mockEval(job)));
    const place = placeCmd(h.state.jobById('default', 'web')!, n, 1);
    h.apply(place);
    const allocId = place.AllocsUpdated[0]!.ID;
    await assert.rejects(h.ep.delete(vol.ID, 'default'), (e) => hasErrorCode(e, 'HOST_VOLUME_IN_USE') && e.message.includes(allocId));
    await assert.rejects(h.ep.delete(vol.ID, 'other'), (e) => hasErrorCode(e, 'HOST_VOLUME_NOT_FOUND'));
    h.apply({ Type: 'AllocClientUpdate', Allocs: [{ ...h.state.allocById(allocId)!, ClientStatus: 'complete' }], Evals: [], Now: 1 } as unknown as Command);
    const deleting = h.ep.delete(vol.ID, 'default');
    await new Promise((r) => setImmediate(r));
    assert.equal(h.state.hostVolumeById(vol.ID)?.DeleteRequested, true);
    await h.ep.reportFromClient({ ID: vol.ID, Op: 'delete' }, n.SecretID);
    await deleting;
    assert.equal(h.state.hostVolumeById(vol.ID), undefined);
  });

  it('refuses a report from another node\'s secret', async () => {
    const h = harness();
    const n = h.node();
    const other = h.node();
    const creating = h.ep.create({ Volume: { Name: 'data', NodeID: n.ID } }, 'default');
    await new Promise((r) => setImmediate(r));
    const vol = h.state.hostVolumes('*')[0]!;
    await assert.rejects(h.ep.reportFromClient({ ID: vol.ID, Op: 'create', HostPath: '/etc' }, other.SecretID), (e) => hasErrorCode(e, 'NODE_SECRET_MISMATCH'));
    assert.equal(h.state.hostVolumeById(vol.ID)?.HostPath, '');
    await h.clientCreates(n);
    await creating;
  });

  it('publishes HostVolume events (registered on each change, deleted on removal) without the internal flag', () => {
    const state = new StateStore();
    const fsm = new Fsm(state);
    const n = mockNode();
    fsm.apply(nodeCmd(n), 1);
    const vol = {
      Namespace: 'default', ID: '0b5e8a3c-6f0e-4d52-9a37-1d2c3e4f5a6b', Name: 'data', PluginID: 'mkdir', NodePool: 'default', NodeID: n.ID, Constraints: null,
      RequestedCapacityMinBytes: 0, RequestedCapacityMaxBytes: 0, CapacityBytes: 0, RequestedCapabilities: [], Parameters: null, HostPath: '/srv/v',
      State: 'pending' as const, CreateIndex: 0, CreateTime: 0, ModifyIndex: 0, ModifyTime: 0, DeleteRequested: true,
    };
    const up = fsm.apply({ Type: 'HostVolumeUpsert', Volumes: [vol], Now: 5 }, 2);
    assert.deepEqual(up.map((e) => [e.Topic, e.Type, e.Key, e.Namespace, e.Index]), [['HostVolume', 'HostVolumeRegistered', vol.ID, 'default', 2]]);
    assert.equal('DeleteRequested' in (up[0]!.Payload as { HostVolume: object }).HostVolume, false);
    const del = fsm.apply({ Type: 'HostVolumeDelete', IDs: [vol.ID, 'gone'], Now: 6 }, 3);
    assert.deepEqual(del.map((e) => [e.Topic, e.Type, e.Key]), [['HostVolume', 'HostVolumeDeleted', vol.ID]]);
  });

  it('keeps volumes through serialize/restore and the chunked snapshot', async () => {
    const h = harness();
    const n = h.node();
    const creating = h.ep.create({ Volume: { Name: 'data' } }, 'default');
    await h.clientCreates(n);
    await creating;
    const copy = new StateStore();
    copy.restore(JSON.parse(JSON.stringify(h.state.serialize())));
    assert.deepEqual(copy.hostVolumes('*'), h.state.hostVolumes('*'));
    const fromSnapshot = new StateStore();
    fromSnapshot.restore(await decodeSnapshot(encodeSnapshot(captureState(h.state), 2)));
    assert.deepEqual(fromSnapshot.hostVolumes('*'), h.state.hostVolumes('*'));
  });
});
