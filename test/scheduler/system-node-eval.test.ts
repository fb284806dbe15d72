/**
 * A system job's node-update evaluation walks only the nodes whose inputs changed since the
 * job's last settled walk (src/scheduler/settled-walk.ts), and its plan is the full walk's.
 *
 * The property test runs two identical worlds through the same random history — nodes going
 * down and coming back, turning ineligible, draining, changing attributes without an eval,
 * moving datacenter or pool, purged, joining; allocations failing and completing; nodes too
 * small to place on or filled by another job; the scheduler configuration changing; plans
 * partly refused; the job updated now and then — and evaluates every node update in both: world A as the scheduler
 * does (remembering settled walks), world B always walking in full. Every plan and every
 * evaluation result must be equal, and A must have skipped nodes in most evaluations.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Allocation, Evaluation, Job, Node, Plan } from '../../src/structs/index.js';
import type { SchedulerState } from '../../src/scheduler/interfaces.js';
import { schedulerFactoryFor } from '../../src/scheduler/index.js';
import { forgetSettledWalks } from '../../src/scheduler/settled-walk.js';
import { mockAlloc, mockEval, mockJob, mockNode, mockSystemJob, mockTaskGroup } from '../mock/factories.js';
import { defaultSchedulerConfig } from '../../src/structs/scheduler-config.js';
import { SchedulerHarness } from './harness.js';

/** Node fields only a feasibility check or a placement reads (the walk's pass over the nodes reads none). */
const DEEP_FIELDS = new Set(['Attributes', 'Drivers', 'NodeResources', 'Meta', 'HostVolumes']);

/** The snapshot, with counts of nodeById calls and of nodes whose deep fields were read. */
function countingState(snap: SchedulerState): { state: SchedulerState; nodeByIdCalls: () => number; nodesChecked: () => number } {
  let byId = 0;
  const checked = new Set<string>();
  const wrapped = new WeakMap<Node, Node>();
  const wrap = (n: Node | undefined): Node | undefined => {
    if (!n) return n;
    let w = wrapped.get(n);
    if (!w) {
      w = new Proxy(n, {
        get(target, prop, receiver) {
          if (typeof prop === 'string' && DEEP_FIELDS.has(prop)) checked.add(target.ID);
          return Reflect.get(target, prop, receiver) as unknown;
        },
      });
      wrapped.set(n, w);
    }
    return w;
  };
  const state = new Proxy(snap, {
    get(target, prop) {
      if (prop === 'nodeById') return (id: string) => { byId++; return wrap(target.nodeById(id)); };
      if (prop === 'nodes') return function* () { for (const n of target.nodes()) yield wrap(n)!; };
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { state, nodeByIdCalls: () => byId, nodesChecked: () => checked.size };
}

/** Processes an eval as the harness does, over a counting view of the snapshot. */
async function processCounted(h: SchedulerHarness, ev: Evaluation): Promise<{ nodeByIdCalls: number; nodesChecked: number }> {
  h.state.putEvals([ev]);
  const c = countingState(h.state.snapshot());
  await schedulerFactoryFor(ev.Type)!(c.state, h, h.context()).process(ev);
  return { nodeByIdCalls: c.nodeByIdCalls(), nodesChecked: c.nodesChecked() };
}

function ownerOf(h: SchedulerHarness): object {
  return h.state.snapshot().nodesVersion!()!.owner;
}

/** A seeded random source for the history (the harnesses keep their own for the scheduler). */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** What a plan decided, without what only the annotations count (the skipped nodes' Ignore). */
function planShape(p: Plan): unknown {
  const du = p.Annotations?.DesiredTGUpdates ?? {};
  return {
    NodeUpdate: p.NodeUpdate,
    NodeAllocation: p.NodeAllocation,
    Job: p.Job?.JobModifyIndex,
    SnapshotIndex: p.SnapshotIndex,
    Updates: Object.fromEntries(Object.entries(du).map(([g, u]) => [g, { ...u, Ignore: 0 }])),
  };
}

function evalShape(e: Evaluation): unknown {
  return {
    Status: e.Status,
    StatusDescription: e.StatusDescription,
    FailedTGAllocs: e.FailedTGAllocs,
    QueuedAllocations: e.QueuedAllocations,
    BlockedEval: e.BlockedEval,
    NextEval: e.NextEval,
  };
}

function systemJob(r: () => number, sysbatch: boolean): Job {
  const ports = r() < 0.5;
  const groups = [mockTaskGroup({ Name: 'web', Count: 1, ReschedulePolicy: null })];
  if (ports) {
    groups[0]!.Networks = [{ Mode: 'host', Device: '', CIDR: '', IP: '', MBits: 0, DNS: null, ReservedPorts: null, DynamicPorts: [{ Label: 'http', Value: 0, To: 0, HostNetwork: 'default' }] }];
  }
  if (r() < 0.5) {
    // A second group only some nodes take (a meta constraint), with a bigger ask.
    const g = mockTaskGroup({ Name: 'agent', Count: 1, ReschedulePolicy: null, Constraints: [{ LTarget: '${meta.rack}', RTarget: 'r1', Operand: '=' }] });
    g.Tasks[0]!.Resources = { ...g.Tasks[0]!.Resources, CPU: 1500 };
    groups.push(g);
  }
  const job = mockSystemJob({ Type: sysbatch ? 'sysbatch' : 'system', Datacenters: ['dc1', 'dc2'], TaskGroups: groups });
  // At most 4 allocations per rack: a node's placement depends on the others' (always the full walk).
  if (r() < 0.2) job.Constraints = [...(job.Constraints ?? []), { LTarget: '${meta.rack}', RTarget: '4', Operand: 'distinct_property' }];
  return job;
}

function newClusterNode(id: string, r: () => number): Node {
  const small = r() < 0.1;
  const n = mockNode({
    ID: id,
    SecretID: `secret-${id}`,
    Datacenter: r() < 0.8 ? 'dc1' : r() < 0.5 ? 'dc2' : 'dc3',
    NodeClass: `class-${Math.floor(r() * 3)}`,
    Meta: { rack: r() < 0.5 ? 'r1' : 'r2' },
  });
  if (r() < 0.1) n.Attributes = { ...n.Attributes, 'kernel.name': 'windows' };
  // Too small for one allocation: its placement fails (a blocked eval, queued counts).
  if (small) n.NodeResources = { ...n.NodeResources!, Cpu: { ...n.NodeResources!.Cpu, CpuShares: 300 } };
  return n;
}

/** Applies one random change to both worlds; answers the node whose update is evaluated. */
function mutate(worlds: SchedulerHarness[], r: () => number, next: { id: number }, job: Job): string {
  const [a] = worlds;
  const nodes = [...a!.state.nodes()];
  const pick = nodes[Math.floor(r() * nodes.length)]!;
  const roll = r();
  const forEach = (fn: (h: SchedulerHarness) => void) => { for (const h of worlds) fn(h); };
  const allocsOn = (h: SchedulerHarness, nodeId: string): Allocation[] => h.state.allocsByNode(nodeId).filter((x) => x.JobID === job.ID);
  if (roll < 0.15) {
    const id = `node-${next.id++}`;
    const n = newClusterNode(id, r);
    forEach((h) => h.state.upsertNode({ ...n }));
    return id;
  }
  if (roll < 0.3) {
    const status = pick.Status === 'ready' ? 'down' : 'ready';
    forEach((h) => h.state.upsertNode({ ...h.state.nodeById(pick.ID)!, Status: status }));
  } else if (roll < 0.4) {
    const el = pick.SchedulingEligibility === 'eligible' ? 'ineligible' : 'eligible';
    forEach((h) => h.state.upsertNode({ ...h.state.nodeById(pick.ID)!, SchedulingEligibility: el }));
  } else if (roll < 0.5) {
    // An attribute change without an eval of its own: the next walk, any node's, must see it.
    const other = nodes[Math.floor(r() * nodes.length)]!;
    const kernel = other.Attributes['kernel.name'] === 'linux' ? 'windows' : 'linux';
    forEach((h) => h.state.upsertNode({ ...h.state.nodeById(other.ID)!, Attributes: { ...other.Attributes, 'kernel.name': kernel } }));
  } else if (roll < 0.65) {
    // An allocation somewhere fails or completes (its client reports it).
    const other = nodes[Math.floor(r() * nodes.length)]!;
    const status = r() < 0.5 ? 'failed' : 'complete';
    forEach((h) => {
      const x = allocsOn(h, other.ID).find((y) => y.DesiredStatus === 'run' && y.ClientStatus !== 'failed' && y.ClientStatus !== 'complete');
      if (x) h.state.upsertAlloc({ ...x, ClientStatus: status });
    });
  } else if (roll < 0.7) {
    // Another node is purged (its own eval superseded) while this one re-registers.
    const other = nodes[Math.floor(r() * nodes.length)]!;
    forEach((h) => h.state.apply({ Type: 'NodeDeregister', NodeIDs: [other.ID], Evals: [], Now: 0 }));
    if (other.ID !== pick.ID) forEach((h) => h.state.upsertNode({ ...h.state.nodeById(pick.ID)! }));
  } else if (roll < 0.73) {
    // The garbage collector removes a finished allocation of the job (on another node, mostly).
    const at = r();
    forEach((h) => {
      // A completed one first: a sysbatch job runs again on a node whose completed run is gone.
      const all = h.state.allocsByJob(job.Namespace, job.ID);
      const complete = all.filter((y) => y.ClientStatus === 'complete');
      const done = complete.length > 0 ? complete : all.filter((y) => y.DesiredStatus !== 'run' || y.ClientStatus === 'failed');
      const x = done[Math.floor(at * done.length)];
      if (x) h.state.apply({ Type: 'EvalDelete', EvalIDs: [], AllocIDs: [x.ID] });
    });
  } else if (roll < 0.76) {
    // The job's spec changes (a new version to roll out everywhere).
    const cpu = 400 + Math.floor(r() * 200);
    forEach((h) => {
      const j = h.state.jobById(job.Namespace, job.ID)!;
      const groups = j.TaskGroups.map((g) => ({ ...g, Tasks: g.Tasks.map((t) => ({ ...t, Env: { V: String(cpu) } })) }));
      h.state.upsertJob({ ...j, TaskGroups: groups });
    });
  } else if (roll < 0.8) {
    // Two nodes change at once; only the first one's eval runs (the broker supersedes the other's).
    const other = nodes[Math.floor(r() * nodes.length)]!;
    forEach((h) => {
      h.state.upsertNode({ ...h.state.nodeById(pick.ID)!, Status: 'down' });
      h.state.upsertNode({ ...h.state.nodeById(other.ID)!, Status: other.Status === 'ready' ? 'down' : 'ready' });
    });
  }
  else if (roll < 0.84) {
    // Another job's allocation fills a node: its room changes with no write on the node or on this job's allocations.
    const id = `other-${next.id++}`;
    forEach((h) => {
      const other = mockJob({ ID: id, Datacenters: ['dc1', 'dc2', 'dc3'] });
      h.state.upsertJob(other);
      const x = mockAlloc(h.state.jobById(other.Namespace, other.ID)!, h.state.nodeById(pick.ID)!, { ID: `alloc-${id}`, ClientStatus: 'running' });
      x.AllocatedResources!.Tasks = Object.fromEntries(Object.entries(x.AllocatedResources!.Tasks).map(([k, t]) => [k, { ...t, Cpu: { ...t.Cpu, CpuShares: 3500 } }]));
      h.state.upsertAlloc(x);
    });
  } else if (roll < 0.87) {
    // A node moves datacenter or pool (it re-registers so), without an eval of its own.
    const other = nodes[Math.floor(r() * nodes.length)]!;
    const dc = r() < 0.5 ? 'dc3' : 'dc1';
    const pool = r() < 0.3 ? 'other' : 'default';
    forEach((h) => h.state.upsertNode({ ...h.state.nodeById(other.ID)!, Datacenter: dc, NodePool: pool }));
  } else if (roll < 0.9) {
    // A drain starts (the job's allocations there marked to migrate) or ends.
    const draining = pick.DrainStrategy === null;
    forEach((h) => {
      const strategy = draining ? { Deadline: 1e9, IgnoreSystemJobs: false, ForceDeadline: '', StartedAt: '' } : null;
      h.state.apply({ Type: 'NodeUpdateDrain', NodeID: pick.ID, DrainStrategy: strategy, MarkEligible: !draining, Status: draining ? 'draining' : 'complete', Meta: null, Event: null, Evals: [], Now: 0 });
      const ids = draining ? allocsOn(h, pick.ID).map((x) => x.ID) : [];
      if (ids.length > 0) h.state.apply({ Type: 'AllocUpdateDesiredTransition', Allocs: Object.fromEntries(ids.map((i) => [i, { Migrate: true }])), Evals: [], Now: 0 });
    });
  } else if (roll < 0.92) {
    // The operator's scheduler configuration changes (no node or allocation written).
    const config = { ...defaultSchedulerConfig(), SchedulerAlgorithm: r() < 0.5 ? 'spread' : 'binpack', MemoryOversubscriptionEnabled: r() < 0.5 } as const;
    forEach((h) => h.state.apply({ Type: 'SchedulerConfigSet', Config: config, Now: 0 }));
  } else if (roll < 0.95) {
    // The applier refuses this node's placements in the next plan: a partial commit, then a retry.
    forEach((h) => h.rejectNodeOnce.add(pick.ID));
  }
  // Otherwise the node just re-registers as it was (its record written again).
  else forEach((h) => { const n = h.state.nodeById(pick.ID); if (n) h.state.upsertNode({ ...n }); });
  return pick.ID;
}

test('a node-update evaluation of a system job plans as the full walk, over random histories', async () => {
  let restricted = 0;
  let evals = 0;
  for (let seed = 1; seed <= 24; seed++) {
    const r = rng(seed);
    const sysbatch = seed % 3 === 0;
    const worlds = [new SchedulerHarness(), new SchedulerHarness()];
    const [a, b] = worlds as [SchedulerHarness, SchedulerHarness];
    const next = { id: 0 };
    const size = 8 + Math.floor(r() * 30);
    for (let i = 0; i < size; i++) {
      const n = newClusterNode(`node-${next.id++}`, r);
      for (const h of worlds) h.state.upsertNode({ ...n });
    }
    const job = systemJob(r, sysbatch);
    for (const h of worlds) h.state.upsertJob({ ...job });
    await a.process(mockEval(job, { ID: `register-${seed}` }));
    await b.process(mockEval(job, { ID: `register-${seed}` }));
    for (let step = 0; step < 40; step++) {
      const nodeId = mutate(worlds, r, next, job);
      const ev = mockEval(job, { ID: `eval-${seed}-${step}`, TriggeredBy: 'node-update', NodeID: nodeId });
      const nodesWithAllocs = new Set(a.state.allocsByJob(job.Namespace, job.ID).map((x) => x.NodeID)).size;
      const before = a.plans.length;
      const counted = await processCounted(a, { ...ev });
      forgetSettledWalks(ownerOf(b));
      await b.process({ ...ev });
      const where = `seed ${seed} step ${step} (node ${nodeId})`;
      assert.equal(a.plans.length, b.plans.length, `plan count differs at ${where}`);
      // Every plan of the eval (a partial commit makes two), and what they left: the job's allocations in order.
      for (let i = before; i < a.plans.length; i++) assert.deepEqual(planShape(a.plans[i]!), planShape(b.plans[i]!), `plan ${i - before} differs at ${where}`);
      const allocs = (h: SchedulerHarness) => h.state.allocsByJob(job.Namespace, job.ID).map((x) => `${x.ID}@${x.NodeID}:${x.DesiredStatus}/${x.ClientStatus}`);
      assert.deepEqual(allocs(a), allocs(b), `allocations differ at ${where}`);
      assert.deepEqual(evalShape(a.lastEval()), evalShape(b.lastEval()), `eval result differs at ${where}`);
      assert.deepEqual(a.reblockedEvals.map((e) => e.ID), b.reblockedEvals.map((e) => e.ID), `blocked evals differ at ${where}`);
      evals++;
      if (counted.nodeByIdCalls < nodesWithAllocs) restricted++;
    }
  }
  // Most node updates find the job settled and walk a few nodes; some follow a job change or a
  // removed node, or a walk that failed a placement, and walk in full.
  assert.ok(restricted > evals / 2, `restricted walks: ${restricted} of ${evals}`);
});

test('a node-update evaluation at 2,000 nodes checks only the updated node', async () => {
  const h = new SchedulerHarness();
  for (let i = 0; i < 2_000; i++) h.state.upsertNode(mockNode({ ID: `node-${i}`, SecretID: `s-${i}` }));
  const job = mockSystemJob();
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  assert.equal(h.state.allocsByJob(job.Namespace, job.ID).length, 2_000);
  // The walk after the placement (the first node-update) settles the job: nothing to do anywhere.
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'node-0' }));

  // node-7 goes down (its allocation is lost), then comes back (it gets a new one).
  h.state.upsertNode({ ...h.state.nodeById('node-7')!, Status: 'down' });
  const down = await processCounted(h, mockEval(job, { TriggeredBy: 'node-update', NodeID: 'node-7' }));
  assert.deepEqual(Object.keys(h.lastPlan().NodeUpdate), ['node-7']);
  assert.equal(h.lastPlan().NodeUpdate['node-7']![0]!.ClientStatus, 'lost');
  assert.equal(down.nodeByIdCalls, 1, 'only the updated node is looked up');

  h.state.upsertNode({ ...h.state.nodeById('node-7')!, Status: 'ready' });
  const up = await processCounted(h, mockEval(job, { TriggeredBy: 'node-update', NodeID: 'node-7' }));
  assert.deepEqual(Object.keys(h.lastPlan().NodeAllocation), ['node-7']);
  assert.equal(up.nodesChecked, 1, 'only the updated node is checked for feasibility and capacity');
  assert.deepEqual(h.lastEval().QueuedAllocations, { web: 0 });

  // A job update is not a node's: every node is walked.
  h.state.upsertJob({ ...h.state.jobById(job.Namespace, job.ID)!, Meta: { v: '2' }, TaskGroups: job.TaskGroups.map((g) => ({ ...g, Tasks: g.Tasks.map((t) => ({ ...t, Env: { V: '2' } })) })) });
  const full = await processCounted(h, mockEval(job, { TriggeredBy: 'node-update', NodeID: 'node-7' }));
  assert.ok(full.nodesChecked >= 2_000, `a changed job walks every node (checked ${full.nodesChecked})`);
});

test('a snapshot restored into the cluster is walked in full: its objects keep their older indexes', async () => {
  const h = new SchedulerHarness();
  for (const id of ['n0', 'n1']) h.state.upsertNode(mockNode({ ID: id, SecretID: `s-${id}` }));
  const job = mockSystemJob();
  h.state.upsertJob(job);
  await h.process(mockEval(job));
  // n0's allocation fails and is replaced; then n2 joins, not placed on yet: the state saved.
  const failed = h.state.allocsByNode('n0')[0]!;
  h.state.upsertAlloc({ ...failed, ClientStatus: 'failed' });
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'n0' }));
  h.state.upsertNode(mockNode({ ID: 'n2', SecretID: 's-n2' }));
  const saved = h.state.store.serialize();
  // The failed one is collected, n2 placed on, and a walk settles the job: as many nodes and
  // allocations as in the saved state, so only the restore index tells them apart.
  h.state.apply({ Type: 'EvalDelete', EvalIDs: [], AllocIDs: [failed.ID] });
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'n2' }));
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'n0' }));
  assert.equal(h.state.allocsByJob(job.Namespace, job.ID).length, 3);

  h.state.store.restoreAt(saved, h.state.index() + 1);
  assert.equal(h.state.allocsByNode('n2').length, 0);
  h.state.upsertNode({ ...h.state.nodeById('n0')! });
  const plans = h.plans.length;
  await h.process(mockEval(job, { TriggeredBy: 'node-update', NodeID: 'n0' }));
  assert.equal(h.plans.length, plans + 1, 'the restored state has work: n2 has no allocation');
  assert.deepEqual(Object.keys(h.lastPlan().NodeAllocation), ['n2']);
});
