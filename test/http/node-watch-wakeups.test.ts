/**
 * What clients' blocking watches cost while nothing changes for their node: 1,000 held
 * `GET /v1/node/:id/allocations?index=` queries and 1,000 held `GET /v1/node/:id?index=` queries,
 * against the real server and HTTP layer, are not woken by heartbeats, by jobs, evaluations and
 * allocations placed on another node, or by another node's update — only the watch of the node
 * a write concerns wakes (counted by the state store's wakeup counter, exported as a metric).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Allocation, Node } from '../../src/structs/index.js';
import { serviceJob, startServer, waitForState, type ServerUnderTest } from './real-server.js';
import { registerMockNodes, settled } from '../server/settled-server.js';

const NODES = 1000;
let sut: ServerUnderTest;
const nodes: Node[] = [];

before(async () => {
  sut = await startServer({ random: () => 0 }, { numWorkers: 1 });
  await settled(sut.server);
  nodes.push(...(await registerMockNodes(sut.server, NODES)));
});

after(async () => {
  await sut.close();
});

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/** Holds one blocking query per URL at the index its first answer gave; tracks which returned. */
async function hold(urls: string[]): Promise<{ returned: Set<number>; pending: Promise<LightMyRequestResponse>[] }> {
  const returned = new Set<number>();
  const pending: Promise<LightMyRequestResponse>[] = [];
  for (const [i, url] of urls.entries()) {
    const first = await sut.app.inject({ url });
    assert.equal(first.statusCode, 200, first.body);
    const index = Number(first.headers['x-nomad-index']);
    assert.ok(index > 0);
    pending.push(
      sut.app.inject({ url: `${url}?index=${index}&wait=10m` }).then((r) => {
        returned.add(i);
        return r;
      }),
    );
  }
  await turns(20);
  assert.equal(returned.size, 0, 'every watch is held');
  return { returned, pending };
}

test('1,000 held allocation watches and 1,000 node watches wake only for their own node', async () => {
  const { server } = sut;
  const allocWatch = await hold(nodes.map((n) => `/v1/node/${n.ID}/allocations`));
  const nodeWatch = await hold(nodes.map((n) => `/v1/node/${n.ID}`));
  const wakeups = (): number => server.state.watchWakeups?.() ?? Number.NaN;
  const w0 = wakeups();

  // Every node heartbeats: a heartbeat is no log entry and wakes nothing.
  const index0 = server.state.latestIndex();
  for (const n of nodes) await server.heartbeatNode(n.ID, 'ready', n.SecretID);
  assert.equal(server.state.latestIndex(), index0, 'heartbeats wrote nothing to the log');
  await turns(20);
  assert.equal(wakeups(), w0, 'heartbeats woke a watch');

  // A job placed on one node (job, evaluation, plan, allocation writes): only that node's allocation watch wakes.
  const res = await server.registerJob(serviceJob('one', 1));
  await waitForState(server, () => server.state.evalById(res.evalId)?.Status === 'complete', 'placement');
  const [alloc] = server.state.allocsByJob('default', 'one');
  assert.ok(alloc);
  const placedOn = nodes.findIndex((n) => n.ID === alloc.NodeID);
  await turns(20);
  assert.deepEqual([...allocWatch.returned], [placedOn], 'only the watch of the node given the allocation returned');
  const answer = await allocWatch.pending[placedOn]!;
  assert.deepEqual(answer.json<Allocation[]>().map((a) => a.ID), [alloc.ID]);
  assert.equal(Number(answer.headers['x-nomad-index']), alloc.ModifyIndex);
  assert.equal(nodeWatch.returned.size, 0, 'a placement woke a node watch');

  // Another node's update wakes that node's watch alone.
  const other = (placedOn + 1) % NODES;
  const w1 = wakeups();
  await server.updateNodeEligibility(nodes[other]!.ID, 'ineligible');
  await turns(20);
  assert.deepEqual([...nodeWatch.returned], [other]);
  assert.equal((await nodeWatch.pending[other]!).json<Node>().SchedulingEligibility, 'ineligible');
  assert.deepEqual([...allocWatch.returned], [placedOn], 'a node update woke an allocation watch');
  assert.equal(wakeups() - w1, 1, 'one wakeup for one node update');

  const metrics = await sut.app.inject({ url: '/v1/metrics?format=prometheus' });
  assert.match(metrics.body, /^caravan_state_watch_wakeups \d+$/m);
});
