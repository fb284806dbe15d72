import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Allocation, Node } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from './real-server.js';

let sut: ServerUnderTest;
before(async () => {
  // No heartbeat jitter: the TTL answered is the configured minimum.
  sut = await startServer({}, { random: () => 0 });
});
after(() => sut.close());

const put = (url: string, payload: unknown, token?: string) =>
  sut.app.inject({ method: 'PUT', url, payload: payload as object, headers: token === undefined ? {} : { 'x-nomad-token': token } });

test('node register and heartbeat answer the TTL in nanoseconds', async () => {
  const node = mockNode({ ID: '00000000-0000-0000-0000-0000000000a1' });
  const reg = await put('/v1/internal/node/register', { Node: node }, node.SecretID);
  assert.equal(reg.statusCode, 200, reg.body);
  assert.equal(reg.json<{ HeartbeatTTL: number }>().HeartbeatTTL, 10_000_000_000);
  const hb = await put(`/v1/internal/node/${node.ID}/heartbeat`, { Status: 'ready' }, node.SecretID);
  assert.equal(hb.statusCode, 200, hb.body);
  const bearer = await sut.app.inject({ method: 'PUT', url: `/v1/internal/node/${node.ID}/heartbeat`, payload: { Status: 'ready' }, headers: { authorization: `Bearer ${node.SecretID}` } });
  assert.equal(bearer.statusCode, 200, bearer.body);
  const unknown = await put('/v1/internal/node/zzz/heartbeat', { Status: 'ready' }, node.SecretID);
  assert.equal(unknown.statusCode, 404);
});

test('client calls without the node SecretID are 403 "Permission denied" and change nothing', async () => {
  const { node, allocs } = await placeJob(sut.server, serviceJob('guarded', 1), mockNode());
  const alloc = allocs[0] as Allocation;
  for (const token of [undefined, '', 'not-the-secret']) {
    const hb = await put(`/v1/internal/node/${node.ID}/heartbeat`, { Status: 'down' }, token);
    assert.equal(hb.statusCode, 403, String(token));
    assert.equal(hb.body, 'Permission denied');
    const upd = await put('/v1/internal/allocs/update', { Allocs: [{ ID: alloc.ID, NodeID: node.ID, ClientStatus: 'failed' }] }, token);
    assert.equal(upd.statusCode, 403, String(token));
  }
  const hijack = await put('/v1/internal/node/register', { Node: { ...node, SecretID: 'mine-now', Status: 'down' } }, 'mine-now');
  assert.equal(hijack.statusCode, 403);
  assert.equal(sut.server.state.nodeById(node.ID)!.Status, 'ready');
  assert.equal(sut.server.state.nodeById(node.ID)!.SecretID, node.SecretID);
  assert.equal(sut.server.state.allocById(alloc.ID)!.ClientStatus, 'pending');
  // The node's own client may.
  const ok = await put('/v1/internal/allocs/update', { Allocs: [{ ID: alloc.ID, NodeID: node.ID, ClientStatus: 'running', TaskStates: {} }] }, node.SecretID);
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(sut.server.state.allocById(alloc.ID)!.ClientStatus, 'running');
});

test('GET /v1/node/:id never answers the SecretID', async () => {
  const node: Node = mockNode();
  await sut.server.registerNode(node);
  const res = await sut.app.inject({ url: `/v1/node/${node.ID}` });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json<Node>().SecretID, '');
  assert.ok(!res.body.includes(node.SecretID));
  assert.equal(sut.server.state.nodeById(node.ID)!.SecretID, node.SecretID, 'the stored node keeps it');
});

test('internal endpoints reject bad bodies naming the field', async () => {
  const nodesBefore = sut.server.state.nodes().length;
  const rows = [
    { name: 'no Node', url: '/v1/internal/node/register', payload: {}, want: /Node must be specified/ },
    { name: 'no Node.ID', url: '/v1/internal/node/register', payload: { Node: { Name: 'x' } }, want: /Node\.ID/ },
    { name: 'no SecretID', url: '/v1/internal/node/register', payload: { Node: { ...mockNode(), SecretID: '' } }, want: /Node\.SecretID must be specified/ },
    { name: 'bad status', url: '/v1/internal/node/n1/heartbeat', payload: { Status: 'sleepy' }, want: /Status "sleepy"/ },
    { name: 'no Allocs', url: '/v1/internal/allocs/update', payload: {}, want: /Allocs must be specified/ },
    { name: 'bad alloc status', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'weird' }] }, want: /Allocs\[0\]\.ClientStatus/ },
    { name: 'node without resources', url: '/v1/internal/node/register', payload: { Node: { ...mockNode({ ID: 'n2' }), NodeResources: null } }, want: /Node\.NodeResources must be a JSON object/ },
    { name: 'node cpu not a number', url: '/v1/internal/node/register', payload: { Node: { ...mockNode({ ID: 'n2' }), NodeResources: { Cpu: { CpuShares: 'lots' }, Memory: { MemoryMB: 1 }, Disk: { DiskMB: 1 } } } }, want: /Node\.NodeResources\.Cpu\.CpuShares/ },
    { name: 'node attribute not a string', url: '/v1/internal/node/register', payload: { Node: { ...mockNode({ ID: 'n2' }), Attributes: { 'cpu.numcores': 2 } } }, want: /Node\.Attributes\["cpu\.numcores"\]/ },
    { name: 'null task state', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', TaskStates: { web: null } }] }, want: /Allocs\[0\]\.TaskStates\.web must be a JSON object/ },
    { name: 'bad task state name', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', TaskStates: { web: { State: 'napping' } } }] }, want: /TaskStates\.web\.State "napping"/ },
    { name: 'events not an array', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', TaskStates: { web: { State: 'running', Events: {} } } }] }, want: /TaskStates\.web\.Events must be an array/ },
    { name: 'bad deployment health', url: '/v1/internal/allocs/update', payload: { Allocs: [{ ID: 'a', ClientStatus: 'running', DeploymentStatus: { Healthy: 'yes' } }] }, want: /DeploymentStatus\.Healthy/ },
  ];
  for (const r of rows) {
    const res = await put(r.url, r.payload);
    assert.equal(res.statusCode, 400, r.name);
    assert.match(res.body, r.want, r.name);
  }
  assert.equal(sut.server.state.nodes().length, nodesBefore, 'no node was registered');
  assert.equal(sut.server.state.nodeById('n2'), undefined);
});
