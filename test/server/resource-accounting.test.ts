import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { PlanApplier } from '../../src/server/plan/plan-applier.js';
import { ProposedUsage, nodeCapacity } from '../../src/scheduler/node-usage.js';
import { emptyPlan, type Allocation, type Node } from '../../src/structs/index.js';
import { mockAlloc, mockJob, mockNode } from '../mock/factories.js';
import { NOW, nodeCmd, registerCmd } from './fsm-helpers.js';

function setup() {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  const commit = async (c: Command): Promise<number> => {
    fsm.apply(c, ++index);
    return index;
  };
  return { state, commit, applier: new PlanApplier({ state, commit, nowNanos: () => NOW }) };
}

function place(allocs: Allocation[]): Command {
  return {
    Type: 'ApplyPlanResults', EvalID: 'e', Job: null, AllocsUpdated: allocs, AllocsStopped: [],
    Deployment: null, DeploymentUpdates: [], Evals: [], Now: NOW,
  };
}

describe('shared resource accounting', () => {
  it('counts an allocation without AllocatedResources by its group ask on both sides', async () => {
    const { state, commit, applier } = setup();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    await commit(nodeCmd(node));
    await commit(registerCmd(job));
    // 6 recorded allocations (3000 MHz) and one without AllocatedResources (its ask: 500 MHz).
    const held = [...Array.from({ length: 6 }, () => mockAlloc(job, node)), mockAlloc(job, node, { AllocatedResources: null })];
    await commit(place(held));
    const sched = new ProposedUsage(state.snapshot()).get(node.ID);
    const server = state.nodeUsage.get(node.ID);
    assert.equal(server.totals.cpu, sched.cpu);
    assert.equal(server.totals.cpu, 3500);
    // One more 500 MHz allocation does not fit in 3900 MHz: the applier must agree with the scheduler.
    const plan = emptyPlan('e2', '', 50, job);
    plan.NodeAllocation[node.ID] = [mockAlloc(job, node)];
    const result = await applier.submit(plan);
    assert.deepEqual(result.NodeAllocation, {});
    assert.equal(applier.lastRejections[0]?.reason, 'cpu exhausted');
  });

  it('takes group ports from Shared.Ports when present, else Shared.Networks, on both sides', async () => {
    const { state, commit } = setup();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    await commit(nodeCmd(node));
    await commit(registerCmd(job));
    const a = mockAlloc(job, node);
    a.AllocatedResources!.Shared = {
      DiskMB: 0,
      Ports: [{ Label: 'http', Value: 8080, To: 0, HostIP: '' }],
      Networks: [{ Mode: 'host', Device: '', CIDR: '', IP: '', MBits: 0, DNS: null, ReservedPorts: [{ Label: 'old', Value: 9090, To: 0, HostNetwork: '' }], DynamicPorts: null }],
    } as never;
    await commit(place([a]));
    assert.deepEqual([...state.nodeUsage.get(node.ID).ports.keys()], [8080]);
    assert.deepEqual([...new ProposedUsage(state.snapshot()).get(node.ID).basePorts], [8080]);
  });

  it('gives a node without NodeResources zero capacity instead of throwing', () => {
    const node: Node = { ...mockNode(), NodeResources: null as unknown as Node['NodeResources'], ReservedResources: null };
    assert.deepEqual({ ...nodeCapacity(node) }, { cpu: 0, memory: 0, disk: 0 });
  });
});
