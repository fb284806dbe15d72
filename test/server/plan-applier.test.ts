import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { PlanApplier } from '../../src/server/plan/plan-applier.js';
import { emptyPlan, type Allocation, type Job, type Node } from '../../src/structs/index.js';
import { mockAlloc, mockJob, mockNode } from '../mock/factories.js';
import { NOW, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

function setup() {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  const commits: Command[] = [];
  const commit = async (c: Command): Promise<number> => {
    commits.push(c);
    fsm.apply(c, ++index);
    return index;
  };
  const applier = new PlanApplier({ state, commit, nowNanos: () => NOW });
  return { state, commit, applier, commits };
}

function allocs(job: Job, node: Node, n: number, over: Partial<Allocation> = {}): Allocation[] {
  return Array.from({ length: n }, () => mockAlloc(job, node, { ClientStatus: 'pending', ...over }));
}

describe('PlanApplier', () => {
  it('commits the nodes that fit and drops the rest with a RefreshIndex', async () => {
    const { state, commit, applier } = setup();
    const job = mockJob({ ID: 'web' });
    const a = mockNode();
    const b = mockNode();
    await commit(nodeCmd(a));
    await commit(nodeCmd(b));
    await commit(registerCmd(job));
    const plan = emptyPlan('e1', '', 50, job);
    plan.NodeAllocation[a.ID] = allocs(job, a, 7); // 3500 MHz of 3900
    plan.NodeAllocation[b.ID] = allocs(job, b, 8); // 4000 MHz > 3900
    const result = await applier.submit(plan);
    assert.deepEqual(Object.keys(result.NodeAllocation), [a.ID]);
    assert.ok(result.RefreshIndex >= result.AllocIndex && result.AllocIndex > 0);
    assert.equal(state.allocsByNode(a.ID).length, 7);
    assert.equal(state.allocsByNode(b.ID).length, 0);
    assert.equal(applier.lastRejections[0]?.reason, 'cpu exhausted');
  });

  it('drops everything for an AllAtOnce plan with a misfit', async () => {
    const { state, commit, applier, commits } = setup();
    const job = mockJob({ ID: 'web', AllAtOnce: true });
    const a = mockNode();
    const b = mockNode({ Status: 'down' });
    await commit(nodeCmd(a));
    await commit(nodeCmd(b));
    const before = commits.length;
    const plan = emptyPlan('e1', '', 50, job);
    plan.NodeAllocation[a.ID] = allocs(job, a, 1);
    plan.NodeAllocation[b.ID] = allocs(job, b, 1);
    const result = await applier.submit(plan);
    assert.deepEqual(result.NodeAllocation, {});
    assert.ok(result.RefreshIndex > 0);
    assert.equal(commits.length, before);
    assert.equal(state.allocs().length, 0);
  });

  it('counts stops in the same plan as freed capacity and rejects port conflicts', async () => {
    const { state, commit, applier } = setup();
    const job = mockJob({ ID: 'web' });
    const n = mockNode();
    await commit(nodeCmd(n));
    await commit(registerCmd(job));
    const first = emptyPlan('e1', '', 50, job);
    first.NodeAllocation[n.ID] = allocs(job, n, 7);
    await applier.submit(first);
    const running = state.allocsByNode(n.ID);
    const second = emptyPlan('e2', '', 50, job);
    second.NodeUpdate[n.ID] = running.slice(0, 2).map((a) => ({ ...a, DesiredStatus: 'stop' as const }));
    second.NodeAllocation[n.ID] = allocs(job, n, 2);
    const r2 = await applier.submit(second);
    assert.equal(r2.RefreshIndex, 0);
    assert.equal(state.allocsByNode(n.ID).filter((a) => a.DesiredStatus === 'run').length, 7);

    const withPort = (): Allocation =>
      mockAlloc(job, n, {
        AllocatedResources: {
          Tasks: {},
          TaskLifecycles: {},
          Shared: { Networks: null, DiskMB: 0, Ports: [{ Label: 'http', Value: 8080, To: 0, HostIP: '' }] },
        },
      });
    const third = emptyPlan('e3', '', 50, job);
    third.NodeAllocation[n.ID] = [withPort(), withPort()];
    const r3 = await applier.submit(third);
    assert.deepEqual(r3.NodeAllocation, {});
    assert.match(applier.lastRejections[0]?.reason ?? '', /port 8080/);
  });

  it('rejects new placements on nodes that are gone, down or ineligible', async () => {
    const { commit, applier } = setup();
    const job = mockJob({ ID: 'web' });
    const ineligible = mockNode({ SchedulingEligibility: 'ineligible' });
    await commit(nodeCmd(ineligible));
    const missing = mockNode();
    const plan = emptyPlan('e1', '', 50, job);
    plan.NodeAllocation[ineligible.ID] = allocs(job, ineligible, 1);
    plan.NodeAllocation[missing.ID] = allocs(job, missing, 1);
    const r = await applier.submit(plan);
    assert.deepEqual(r.NodeAllocation, {});
    assert.deepEqual(applier.lastRejections.map((x) => x.reason).sort(), ['node does not exist', 'node is not eligible']);
  });

  it('checks plans submitted together against each other and commits them in one batch', async () => {
    const { state, commit, applier } = setup();
    const job = mockJob({ ID: 'web' });
    const n = mockNode();
    await commit(nodeCmd(n));
    await commit(registerCmd(job));
    const p1 = emptyPlan('e1', '', 50, job);
    p1.NodeAllocation[n.ID] = allocs(job, n, 5);
    const p2 = emptyPlan('e2', '', 50, job);
    p2.NodeAllocation[n.ID] = allocs(job, n, 5); // fits alone, not after p1 (3900 MHz)
    const [r1, r2] = await Promise.all([applier.submit(p1), applier.submit(p2)]);
    assert.equal(r1.RefreshIndex, 0);
    assert.deepEqual(r2.NodeAllocation, {});
    assert.ok(r2.RefreshIndex >= r1.AllocIndex);
    assert.equal(state.allocsByNode(n.ID).length, 5);
  });

  it('does not count the room an earlier plan of the batch frees: its commit may fail while a later one succeeds', async () => {
    const state = new StateStore();
    const fsm = new Fsm(state);
    let index = 0;
    const write = (c: Command): number => {
      fsm.apply(c, ++index);
      return index;
    };
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const commit = async (c: Command): Promise<number> => {
      if (c.Type === 'ApplyPlanResults' && c.EvalID === 'first') await gate;
      if (c.Type === 'ApplyPlanResults' && c.EvalID === 'stops') throw new Error('append failed');
      return write(c);
    };
    const applier = new PlanApplier({ state, commit, nowNanos: () => NOW });
    const job = mockJob({ ID: 'web' });
    const [n, other] = [mockNode(), mockNode()];
    write(nodeCmd(n));
    write(nodeCmd(other));
    write(registerCmd(job));
    write(placeCmd(job, n, 7, { ClientStatus: 'running' })); // 3,500 of 3,900 MHz: one more fits only after a stop
    // A first plan holds the applier until both others are queued, so they share a batch.
    const first = emptyPlan('first', '', 50, job);
    first.NodeAllocation[other.ID] = allocs(job, other, 1);
    const pFirst = applier.submit(first);
    const stops = emptyPlan('stops', '', 50, job);
    stops.NodeUpdate[n.ID] = [state.allocsByNode(n.ID)[0]!];
    const place = emptyPlan('place', '', 50, job);
    place.NodeAllocation[n.ID] = allocs(job, n, 1);
    const [pStops, pPlace] = [applier.submit(stops), applier.submit(place)];
    open();
    await pFirst;
    await assert.rejects(pStops, /append failed/);
    const r = await pPlace;
    assert.ok(r.RefreshIndex > 0, 'the placement is refused; its worker plans again once the stop applied');
    const live = state.allocsByNode(n.ID).filter((a) => a.DesiredStatus === 'run');
    assert.equal(live.length, 7, 'the node is not over-committed');
  });
});
