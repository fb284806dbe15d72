/**
 * A client node trying to read another node's allocations (their jobs carry env, templates and
 * task configs) through the routes behind the allocation watch: with its own SecretID against
 * the other node's ID, with the other node's allocation IDs against its own ID, with no secret,
 * and with malformed or oversized ID lists. Every attempt is refused or answers nothing of the
 * other node; the node's own reads work. The watch's `HostVolumesIndex` (the index of the node's
 * dynamic host volumes) tells a node of its own volumes only.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Allocation } from '../../src/structs/index.js';
import { MAX_ALLOC_IDS_PER_FETCH } from '../../src/server/client-alloc-reads.js';
import { mockNode } from '../mock/factories.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from '../http/real-server.js';

let sut: ServerUnderTest;
before(async () => {
  sut = await startServer();
});
after(() => sut.close());

const listing = (nodeId: string, token?: string) =>
  sut.app.inject({ method: 'GET', url: `/v1/internal/node/${nodeId}/client-allocs`, headers: token === undefined ? {} : { 'x-nomad-token': token } });
const fetchAllocs = (nodeId: string, payload: unknown, token?: string) =>
  sut.app.inject({ method: 'PUT', url: `/v1/internal/node/${nodeId}/allocs`, payload: payload as object, headers: token === undefined ? {} : { 'x-nomad-token': token } });

test("a node cannot list or fetch another node's allocations", async () => {
  const victim = await placeJob(sut.server, serviceJob('victim', 1), mockNode());
  // In its own datacenter, so that its job is placed on it and not beside the victim's.
  const attacker = await placeJob(sut.server, serviceJob('attacker', 1, { Datacenters: ['dc-attacker'] }), mockNode({ Datacenter: 'dc-attacker' }));
  assert.notEqual(victim.allocs[0]?.NodeID, attacker.node.ID);
  assert.equal(attacker.allocs[0]?.NodeID, attacker.node.ID);
  const victimAlloc = victim.allocs[0] as Allocation;
  const ownAlloc = attacker.allocs[0] as Allocation;

  // Its own reads work: the listing is IDs and indexes, the fetch the full allocation.
  const own = await listing(attacker.node.ID, attacker.node.SecretID);
  assert.equal(own.statusCode, 200, own.body);
  assert.deepEqual(own.json<{ Allocs: Record<string, number> }>().Allocs, { [ownAlloc.ID]: ownAlloc.AllocModifyIndex });
  const ownFetch = await fetchAllocs(attacker.node.ID, { AllocIDs: [ownAlloc.ID] }, attacker.node.SecretID);
  assert.equal(ownFetch.statusCode, 200, ownFetch.body);
  assert.equal(ownFetch.json<{ Allocs: Allocation[] }>().Allocs[0]?.ID, ownAlloc.ID);

  // The victim's node ID with the attacker's secret, none, or a wrong one: 403.
  for (const token of [attacker.node.SecretID, undefined, '', 'guess']) {
    const l = await listing(victim.node.ID, token);
    assert.equal(l.statusCode, 403, `listing with ${String(token)}`);
    const f = await fetchAllocs(victim.node.ID, { AllocIDs: [victimAlloc.ID] }, token);
    assert.equal(f.statusCode, 403, `fetch with ${String(token)}`);
    assert.ok(!f.body.includes(victimAlloc.ID));
  }
  // The victim's allocation IDs under the attacker's own node: left out, as an unknown ID is,
  // so the answer does not even tell that the ID exists.
  const smuggled = await fetchAllocs(attacker.node.ID, { AllocIDs: [victimAlloc.ID, ownAlloc.ID, 'no-such-alloc'] }, attacker.node.SecretID);
  assert.equal(smuggled.statusCode, 200, smuggled.body);
  assert.deepEqual(smuggled.json<{ Allocs: Allocation[] }>().Allocs.map((a) => a.ID), [ownAlloc.ID]);
  assert.ok(!smuggled.body.includes(victimAlloc.ID));
  assert.ok(!smuggled.body.includes('"victim"'), 'nothing of the victim job');
});

test('a fetch with bad or too many allocation IDs is a 400 naming AllocIDs', async () => {
  const { node } = await placeJob(sut.server, serviceJob('bounded', 1), mockNode());
  const rows: { payload: unknown; want: RegExp }[] = [
    { payload: {}, want: /AllocIDs must be a list/ },
    { payload: { AllocIDs: 'abc' }, want: /AllocIDs must be a list/ },
    { payload: { AllocIDs: ['ok', 7] }, want: /AllocIDs\[1\]/ },
    { payload: { AllocIDs: [''] }, want: /AllocIDs\[0\]/ },
    { payload: { AllocIDs: ['x'.repeat(10_000)] }, want: /AllocIDs\[0\]/ },
    { payload: { AllocIDs: Array.from({ length: MAX_ALLOC_IDS_PER_FETCH + 1 }, (_, i) => `id-${i}`) }, want: new RegExp(`at most ${MAX_ALLOC_IDS_PER_FETCH}`) },
  ];
  for (const row of rows) {
    const res = await fetchAllocs(node.ID, row.payload, node.SecretID);
    assert.equal(res.statusCode, 400, JSON.stringify(row.payload).slice(0, 80));
    assert.match(res.body, row.want);
  }
});

test("a node learns nothing of another node's host volumes through the watch's HostVolumesIndex", async () => {
  const victim = mockNode();
  const attacker = mockNode();
  await sut.server.registerNode(victim);
  await sut.server.registerNode(attacker);
  // A volume on the victim's node (written pending until the victim reports it, at the end).
  const registering = sut.app.inject({ method: 'PUT', url: '/v1/volume/host/register', payload: { Volume: { Name: 'secret-data', NodeID: victim.ID, HostPath: '/srv/secret' } } });
  for (let i = 0; i < 500 && sut.server.state.hostVolumesByNode(victim.ID).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const [vol] = sut.server.state.hostVolumesByNode(victim.ID);
  assert.ok(vol, 'the victim has a volume');

  // The victim's watch with the attacker's secret, none, or a wrong one: 403, and no index in it.
  for (const token of [attacker.SecretID, undefined, '', 'guess']) {
    const l = await listing(victim.ID, token);
    assert.equal(l.statusCode, 403, `listing with ${String(token)}`);
    assert.ok(!l.body.includes('HostVolumesIndex'), `no volume index answered with ${String(token)}`);
  }
  // The attacker's own watch carries its own volumes' index, untouched by the victim's.
  const own = await listing(attacker.ID, attacker.SecretID);
  assert.equal(own.statusCode, 200, own.body);
  assert.equal(own.json<{ HostVolumesIndex: number }>().HostVolumesIndex, 0);
  const victims = await listing(victim.ID, victim.SecretID);
  assert.equal(victims.json<{ HostVolumesIndex: number }>().HostVolumesIndex, vol.ModifyIndex);
  const report = await sut.app.inject({ method: 'PUT', url: '/v1/internal/host-volumes/report', headers: { 'X-Nomad-Token': victim.SecretID }, payload: { ID: vol.ID, Op: 'create', HostPath: '/srv/secret' } });
  assert.equal(report.statusCode, 200, report.body);
  assert.equal((await registering).statusCode, 200);
});
