/**
 * Placement quality: how evenly spreads (with and without targets) distribute a job, how
 * densely bin-packing fills nodes, how strongly affinities steer. The bounds are the figures
 * the scheduler reached before its spread/affinity path was made to score a bounded candidate
 * set (issue 18); speed work must keep them. Every case runs over several random seeds so a
 * bound is not an accident of one shuffle.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockEval, mockJob, mockNode } from '../mock/factories.js';
import type { Allocation, Job, Node } from '../../src/structs/index.js';
import { SchedulerHarness, planPlaced } from './harness.js';

const SEEDS = [1, 7, 42, 1234, 99991];

function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** Places `job` on `nodes` with the given seed; the placed allocations. */
async function place(nodes: Node[], job: Job, seed: number): Promise<Allocation[]> {
  const h = new SchedulerHarness();
  h.random = seeded(seed);
  for (const n of nodes) h.state.upsertNode(structuredClone(n));
  h.state.upsertJob(structuredClone(job));
  await h.process(mockEval(job));
  return planPlaced(h.lastPlan());
}

function withCount(job: Job, count: number): Job {
  return { ...job, TaskGroups: job.TaskGroups.map((g) => ({ ...g, Count: count })) };
}

/** `n` nodes with meta.rack = r<i % racks>, alternating dc1/dc2. */
function rackedNodes(n: number, racks: number): Node[] {
  return Array.from({ length: n }, (_, i) => mockNode({ ID: `node-${String(i).padStart(4, '0')}`, Datacenter: i % 2 === 0 ? 'dc1' : 'dc2', Meta: { rack: `r${i % racks}` } }));
}

function countBy(allocs: Allocation[], nodes: Node[], key: (n: Node) => string): Map<string, number> {
  const byId = new Map(nodes.map((n) => [n.ID, n]));
  const out = new Map<string, number>();
  for (const a of allocs) {
    const k = key(byId.get(a.NodeID)!);
    out.set(k, (out.get(k) ?? 0) + 1);
  }
  return out;
}

function imbalance(counts: Map<string, number>, values: string[]): number {
  const list = values.map((v) => counts.get(v) ?? 0);
  return Math.max(...list) - Math.min(...list);
}

test('even spread without targets: 10 racks, 40 nodes, 25 allocations differ by at most 1 per rack', async () => {
  const nodes = rackedNodes(40, 10);
  const job = withCount(mockJob({ Datacenters: ['dc1', 'dc2'] }), 25);
  job.Spreads = [{ Attribute: '${meta.rack}', Weight: 50, SpreadTarget: null }];
  for (const seed of SEEDS) {
    const placed = await place(nodes, job, seed);
    assert.equal(placed.length, 25);
    const racks = countBy(placed, nodes, (n) => n.Meta.rack!);
    assert.ok(imbalance(racks, Array.from({ length: 10 }, (_, i) => `r${i}`)) <= 1, `seed ${seed}: ${JSON.stringify([...racks])}`);
  }
});

test('even spread over more feasible nodes than candidates scored: 600 nodes, 12 of 25 racks, 300 allocations', async () => {
  const nodes = rackedNodes(600, 25);
  const eligible = Array.from({ length: 12 }, (_, i) => `r${i}`);
  const job = withCount(mockJob({ Datacenters: ['dc1', 'dc2'] }), 300);
  job.Constraints = [{ LTarget: '${meta.rack}', RTarget: eligible.join(','), Operand: 'set_contains_any' }];
  job.Spreads = [{ Attribute: '${meta.rack}', Weight: 50, SpreadTarget: null }];
  for (const seed of SEEDS) {
    const placed = await place(nodes, job, seed);
    assert.equal(placed.length, 300);
    const racks = countBy(placed, nodes, (n) => n.Meta.rack!);
    for (const r of racks.keys()) assert.ok(eligible.includes(r), `placed on excluded rack ${r}`);
    // 25 each would be perfect; the scheduler scoring every node reached 24–27.
    assert.ok(imbalance(racks, eligible) <= 3, `seed ${seed}: ${JSON.stringify([...racks])}`);
  }
});

test('spread with targets: 70/30 over two datacenters, within one allocation of the target', async () => {
  for (const [nodeCount, count] of [[40, 20], [400, 200]] as const) {
    const nodes = rackedNodes(nodeCount, 4);
    const job = withCount(mockJob({ Datacenters: ['dc1', 'dc2'] }), count);
    job.Spreads = [{ Attribute: '${node.datacenter}', Weight: 100, SpreadTarget: [{ Value: 'dc1', Percent: 70 }, { Value: 'dc2', Percent: 30 }] }];
    for (const seed of SEEDS) {
      const placed = await place(nodes, job, seed);
      assert.equal(placed.length, count);
      const dcs = countBy(placed, nodes, (n) => n.Datacenter);
      assert.ok(Math.abs((dcs.get('dc1') ?? 0) - 0.7 * count) <= 1, `${count} allocs, seed ${seed}: ${JSON.stringify([...dcs])}`);
    }
  }
});

test('spread with a target for one value: values not named each get the remainder as their target', async () => {
  // r0 asks 50%; r1 and r2 are each measured against the 50% left over, so all three even out.
  const nodes = rackedNodes(60, 3);
  const job = withCount(mockJob({ Datacenters: ['dc1', 'dc2'] }), 30);
  job.Spreads = [{ Attribute: '${meta.rack}', Weight: 100, SpreadTarget: [{ Value: 'r0', Percent: 50 }] }];
  for (const seed of SEEDS) {
    const placed = await place(nodes, job, seed);
    assert.equal(placed.length, 30);
    const racks = countBy(placed, nodes, (n) => n.Meta.rack!);
    for (const r of ['r0', 'r1', 'r2']) assert.ok(Math.abs((racks.get(r) ?? 0) - 10) <= 1, `seed ${seed}: ${JSON.stringify([...racks])}`);
  }
});

test('bin-packing fills nodes densely: 20 jobs of 7 allocations on 100 nodes of 7 slots', async () => {
  // mockNode: 4,000 MHz; mockJob asks 500 MHz, so 7 fit on a node beside its reserved CPU. Each
  // job is its own evaluation, applied before the next, so later jobs see earlier ones' load.
  // A job's own allocations repel each other (job anti-affinity), so 20 nodes is out of reach;
  // the scheduler reached 30–35 nodes (mean 32.8) over these seeds.
  let total = 0;
  for (const seed of SEEDS) {
    const h = new SchedulerHarness();
    h.random = seeded(seed);
    for (const n of rackedNodes(100, 5)) h.state.upsertNode(n);
    const used = new Set<string>();
    for (let j = 0; j < 20; j++) {
      const job = withCount(mockJob({ ID: `j${j}`, Name: `j${j}`, Datacenters: ['dc1', 'dc2'] }), 7);
      h.state.upsertJob(job);
      await h.process(mockEval(job));
      const placed = planPlaced(h.lastPlan());
      assert.equal(placed.length, 7);
      for (const a of placed) used.add(a.NodeID);
    }
    assert.ok(used.size <= 35, `seed ${seed}: ${used.size} nodes used`);
    total += used.size;
  }
  assert.ok(total / SEEDS.length <= 33, `mean nodes used ${total / SEEDS.length}`);
});

test('affinity steers: a weight-100 affinity for dc2 puts every allocation there while it has room', async () => {
  const nodes = rackedNodes(200, 10);
  const job = withCount(mockJob({ Datacenters: ['dc1', 'dc2'] }), 150);
  job.Affinities = [{ LTarget: '${node.datacenter}', RTarget: 'dc2', Operand: '=', Weight: 100 }];
  for (const seed of SEEDS) {
    const placed = await place(nodes, job, seed);
    assert.equal(placed.length, 150);
    const dcs = countBy(placed, nodes, (n) => n.Datacenter);
    assert.equal(dcs.get('dc2'), 150, `seed ${seed}`);
  }
});

test('spread and affinity together: an affinity for r0 beside an even rack spread', async () => {
  // The scheduler reached r0 13, the other racks 9 each, for every seed.
  const nodes = rackedNodes(100, 4);
  const job = withCount(mockJob({ Datacenters: ['dc1', 'dc2'] }), 40);
  job.Affinities = [{ LTarget: '${meta.rack}', RTarget: 'r0', Operand: '=', Weight: 50 }];
  job.Spreads = [{ Attribute: '${meta.rack}', Weight: 50, SpreadTarget: null }];
  for (const seed of SEEDS) {
    const placed = await place(nodes, job, seed);
    assert.equal(placed.length, 40);
    const racks = countBy(placed, nodes, (n) => n.Meta.rack!);
    assert.ok((racks.get('r0') ?? 0) >= 13, `seed ${seed}: ${JSON.stringify([...racks])}`);
    assert.ok(imbalance(racks, ['r1', 'r2', 'r3']) <= 1, `seed ${seed}: ${JSON.stringify([...racks])}`);
    assert.ok(imbalance(racks, ['r0', 'r1', 'r2', 'r3']) <= 4, `seed ${seed}: ${JSON.stringify([...racks])}`);
  }
});
