/**
 * The allocation watch carries the node's host volumes' index (`HostVolumesIndex`), so a client
 * needs no second blocking query for its volumes: against the real server and HTTP layer, a
 * volume written on node A answers A's held `client-allocs` watch with the volume's index, and
 * leaves the watches of the other nodes held (counted by the state store's wakeups too).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Node } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { startServer, type ServerUnderTest } from './real-server.js';
import { settled } from '../server/settled-server.js';

const NODES = 20;
let sut: ServerUnderTest;
const nodes: Node[] = [];

before(async () => {
  // Heartbeat TTLs of an hour: no node is marked down (a write) while the test runs.
  sut = await startServer({ random: () => 0 }, { numWorkers: 1, heartbeat: { minTtlMs: 3_600_000 } });
  await settled(sut.server);
  const batch = Array.from({ length: NODES }, () => mockNode());
  await Promise.all(batch.map((n) => sut.server.registerNode(n)));
  nodes.push(...batch);
});

after(async () => {
  await sut.close();
});

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

interface WatchAnswer {
  Allocs: Record<string, number>;
  HostVolumesIndex: number;
  Index: number;
}

test("a host volume written on one node answers that node's allocation watch, and no other", async () => {
  const { server, app } = sut;
  const returned = new Set<number>();
  const pending: Promise<LightMyRequestResponse>[] = [];
  for (const [i, n] of nodes.entries()) {
    const url = `/v1/internal/node/${n.ID}/client-allocs`;
    const headers = { 'X-Nomad-Token': n.SecretID };
    const first = await app.inject({ url, headers });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(first.json<WatchAnswer>().HostVolumesIndex, 0, 'no volume on the node yet');
    const index = Number(first.headers['x-nomad-index']);
    pending.push(app.inject({ url: `${url}?index=${index}&wait=10m`, headers }).then((r) => (returned.add(i), r)));
  }
  await turns(20);
  assert.deepEqual([...returned], [], 'every watch is held');
  const w0 = server.state.watchWakeups?.() ?? Number.NaN;

  const on = 7;
  const node = nodes[on]!;
  // Registering a volume writes it (pending) and waits for the node's report, sent below.
  const registering = app.inject({ method: 'PUT', url: '/v1/volume/host/register', payload: { Volume: { Name: 'data', NodeID: node.ID, HostPath: '/srv/data' } } });
  for (let i = 0; i < 500 && server.state.hostVolumesByNode(node.ID).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const [vol] = server.state.hostVolumesByNode(node.ID);
  assert.ok(vol, 'the volume was written');
  await turns(20);
  assert.deepEqual([...returned], [on], "only the volume's node's watch answered");
  assert.equal((server.state.watchWakeups?.() ?? Number.NaN) - w0, 1, 'one wakeup for one volume');
  const answer = await pending[on]!;
  assert.equal(answer.statusCode, 200, answer.body);
  const body = answer.json<WatchAnswer>();
  assert.equal(body.HostVolumesIndex, vol.ModifyIndex, "the index of the node's volumes");
  assert.deepEqual(body.Allocs, {}, 'no allocation changed');
  assert.equal(Number(answer.headers['x-nomad-index']), vol.ModifyIndex, 'the watch moved to the volume write');

  // The node's report: the register answers, and no other node's watch wakes.
  const report = await app.inject({ method: 'PUT', url: '/v1/internal/host-volumes/report', headers: { 'X-Nomad-Token': node.SecretID }, payload: { ID: vol.ID, Op: 'create', HostPath: '/srv/data' } });
  assert.equal(report.statusCode, 200, report.body);
  assert.equal((await registering).statusCode, 200);
  await turns(20);
  assert.deepEqual([...returned], [on]);
});
