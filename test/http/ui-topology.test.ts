/**
 * The web UI's topology reads (/v1/ui/topology and /v1/ui/topology/nodes): the cluster summed
 * overall and per datacenter over live allocations only, one row per node paged as any list,
 * and answers that follow a change (a stopped job's allocations no longer count).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClusterUsage, NodeUsage } from '../../src/http/api-views/node-usage-views.js';
import { mockNode } from '../mock/factories.js';
import { placeJob, serviceJob, startServer, waitForState, type ServerUnderTest } from './real-server.js';

let s: ServerUnderTest;
const busy = mockNode({ Datacenter: 'dc1' });
const idle = mockNode({ Datacenter: 'dc2' });

async function get<T>(url: string): Promise<{ body: T; nextToken: string | undefined }> {
  const res = await s.app.inject({ method: 'GET', url });
  assert.equal(res.statusCode, 200, res.body);
  return { body: res.json() as T, nextToken: res.headers['x-nomad-nexttoken'] as string | undefined };
}

before(async () => {
  s = await startServer();
  await s.server.registerNode(idle);
  await placeJob(s.server, serviceJob('web', 3), busy);
});
after(async () => {
  await s?.close();
});

test('the summary sums nodes, live allocations, CPU and memory overall and per datacenter', async () => {
  const { body: c } = await get<ClusterUsage>('/v1/ui/topology');
  assert.equal(c.Nodes, 2);
  assert.deepEqual(c.Statuses, { ready: 2 });
  assert.equal(c.Allocations, 3);
  assert.deepEqual(c.Datacenters.map((d) => [d.Name, d.Nodes, d.Allocations]), [['dc1', 1, 3], ['dc2', 1, 0]]);
  const dc1 = c.Datacenters[0]!;
  // mockNode: 4,000 MHz and 8,192 MB less 100 MHz and 256 MB reserved; each task asks 500 MHz, 256 MB.
  assert.deepEqual(dc1.Cpu, { Capacity: 3900, Allocated: 1500 });
  assert.deepEqual(dc1.Memory, { Capacity: 7936, Allocated: 768 });
  assert.equal(c.Cpu.Capacity, 7800);
});

test('node rows page with per_page and next_token, ordered by ID', async () => {
  const [first, second] = [busy, idle].sort((a, b) => (a.ID < b.ID ? -1 : 1));
  const p1 = await get<NodeUsage[]>('/v1/ui/topology/nodes?per_page=1');
  assert.deepEqual(p1.body.map((r) => r.ID), [first!.ID]);
  assert.equal(p1.nextToken, second!.ID);
  const p2 = await get<NodeUsage[]>(`/v1/ui/topology/nodes?per_page=1&next_token=${p1.nextToken}`);
  assert.deepEqual(p2.body.map((r) => r.ID), [second!.ID]);
  assert.equal(p2.nextToken, undefined);
  const row = [...p1.body, ...p2.body].find((r) => r.ID === busy.ID)!;
  assert.equal(row.Allocations, 3);
  assert.equal(row.Datacenter, 'dc1');
  const filtered = await get<NodeUsage[]>('/v1/ui/topology/nodes?filter=' + encodeURIComponent('Datacenter == "dc2"'));
  assert.deepEqual(filtered.body.map((r) => r.ID), [idle.ID]);
});

test('a stopped job no longer counts: the answers follow the allocations table', async () => {
  await s.server.deregisterJob('default', 'web');
  await waitForState(s.server, () => s.server.state.allocsByJob('default', 'web').every((a) => a.DesiredStatus !== 'run'), 'the allocations stopped');
  const { body: c } = await get<ClusterUsage>('/v1/ui/topology');
  assert.equal(c.Allocations, 0);
  assert.equal(c.Cpu.Allocated, 0);
});
