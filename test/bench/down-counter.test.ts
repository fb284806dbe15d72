import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mockNode } from '../mock/factories.js';
import { api, call, startAgent } from '../integration/helpers/agent-process.js';
import { waitFor } from '../integration/helpers/client-agent.js';
import { DownCounter, JsonObjectSplitter } from '../../bench/nodesim/down-counter.js';

interface NodeStub {
  ID: string;
  Status: string;
}

interface AllocStub {
  ID: string;
  NodeID: string;
  ClientStatus: string;
  DesiredStatus: string;
}

interface Summary {
  Summary: Record<string, { Lost: number }>;
}

test('the event stream splitter: objects back to back, split anywhere, braces inside strings', () => {
  const s = new JsonObjectSplitter();
  assert.deepEqual(s.push('{"a":"}{"}{'), ['{"a":"}{"}']);
  assert.deepEqual(s.push('}{"b":{"c":"\\"}"}'), ['{}']);
  assert.deepEqual(s.push('}'), ['{"b":{"c":"\\"}"}}']);
});

// A node marked down and ready again, its allocation lost and reported "complete" by its client
// when it comes back: the end state shows no node down and no allocation lost, the counter 1 and 1.
test('the down counter counts a node marked down and back, and its lost allocation, that the end state hides', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'down-counter-'));
  const config = join(dir, 'heartbeat.hcl');
  // Marked down ~2 s after its last heartbeat.
  writeFileSync(config, 'server {\n  min_heartbeat_ttl = "1s"\n  heartbeat_grace = "1s"\n}\n');
  const agent = await startAgent({ roleArgs: ['-server'], extraArgs: ['-config', config] });
  let counter: DownCounter | null = null;
  const beats = new Map<string, boolean>();
  let timer: NodeJS.Timeout | undefined;
  try {
    const a = agent.address;
    const nodes = [mockNode({ Name: 'steady' }), mockNode({ Name: 'flapping' })];
    for (const n of nodes) {
      const r = await call(a, 'PUT', '/v1/internal/node/register', n.SecretID, { Node: n });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      beats.set(n.ID, true);
    }
    const heartbeat = (n: (typeof nodes)[number]) => call(a, 'PUT', `/v1/internal/node/${n.ID}/heartbeat`, n.SecretID, { Status: 'ready' });
    timer = setInterval(() => {
      for (const n of nodes) if (beats.get(n.ID)) void heartbeat(n).catch(() => undefined);
    }, 300);

    counter = await DownCounter.start(() => [a]);
    const window = await counter.open();
    const job = { Job: { ID: 'sys', Name: 'sys', Type: 'system', Datacenters: ['*'], TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: 10 } }] }] } };
    assert.equal((await api(a, 'PUT', '/v1/jobs', job)).status, 200);
    const flapping = nodes[1]!;
    const first = await waitFor('the system job placed on both nodes', async () => {
      const allocs = (await api<AllocStub[]>(a, 'GET', '/v1/job/sys/allocations')).body;
      return allocs.length === 2 ? allocs.find((x) => x.NodeID === flapping.ID) : undefined;
    });

    // The flapping node stops heartbeating until it is marked down and its allocation lost.
    beats.set(flapping.ID, false);
    await waitFor('the flapping node marked down', async () => {
      const n = (await api<NodeStub[]>(a, 'GET', '/v1/nodes')).body.find((x) => x.ID === flapping.ID);
      return n?.Status === 'down' || undefined;
    }, 20_000);
    await waitFor('its allocation lost', async () => {
      const x = (await api<AllocStub>(a, 'GET', `/v1/allocation/${first.ID}`)).body;
      return x.ClientStatus === 'lost' || undefined;
    }, 20_000);
    // It comes back: heartbeats again, and reports its stopped allocation complete (as a client does).
    await heartbeat(flapping);
    beats.set(flapping.ID, true);
    const upd = await call(a, 'PUT', '/v1/internal/allocs/update', flapping.SecretID, { Allocs: [{ ID: first.ID, ClientStatus: 'complete', ClientDescription: 'stopped' }] });
    assert.equal(upd.status, 200, JSON.stringify(upd.body));
    await waitFor('both nodes ready and the job placed again', async () => {
      const all = (await api<NodeStub[]>(a, 'GET', '/v1/nodes')).body;
      const allocs = (await api<AllocStub[]>(a, 'GET', '/v1/job/sys/allocations')).body;
      return (all.every((n) => n.Status === 'ready') && allocs.filter((x) => x.DesiredStatus === 'run').length === 2) || undefined;
    }, 20_000);

    // The old counting, the end state: nothing down, nothing lost.
    const statuses = (await api<NodeStub[]>(a, 'GET', '/v1/nodes')).body.map((n) => n.Status);
    assert.deepEqual(statuses.filter((s) => s === 'down'), []);
    const summary = (await api<Summary>(a, 'GET', '/v1/job/sys/summary')).body;
    assert.equal(Object.values(summary.Summary).reduce((n, g) => n + g.Lost, 0), 0);

    // The counter saw both.
    const figures = await window.close();
    assert.equal(figures.nodesMarkedDown, 1, JSON.stringify(figures));
    assert.equal(figures.nodes, 1);
    assert.equal(figures.allocsLost, 1);
    assert.equal(counter.all()[0]?.nodeId, flapping.ID);
    // A window opened now starts from zero: the earlier loss is not counted again.
    const later = await (await counter.open()).close();
    assert.deepEqual({ ...later, resumed: 0 }, { nodesMarkedDown: 0, nodes: 0, allocsLost: 0, resumed: 0 });
  } finally {
    clearInterval(timer);
    await counter?.stop();
    await agent.kill();
    await agent.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
