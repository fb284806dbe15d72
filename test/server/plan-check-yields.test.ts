import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { PlanApplier } from '../../src/server/plan/plan-applier.js';
import { decodeCommand, encodeCommand, prepareCommand } from '../../src/server/fsm/command-codec.js';
import { emptyPlan, type Allocation, type Job, type Node, type Plan } from '../../src/structs/index.js';
import { mockAlloc, mockJob, mockNode } from '../mock/factories.js';
import { NOW, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

const NODES = 300;

/**
 * A store of NODES ready nodes and a job, and an applier whose commits apply at once. `sliceMs`
 * 0 makes the check yield after every node.
 */
function setup(sliceMs: number, hooks: { nowNanos?: () => number; checkToken?: (evalId: string, token: string) => boolean } = {}) {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  let turns = 0;
  /** Loop turns counted when each commit was issued. */
  const turnsAtCommit: number[] = [];
  const write = (c: Command): number => {
    fsm.apply(c, ++index);
    return index;
  };
  const commit = async (c: Command): Promise<number> => {
    turnsAtCommit.push(turns);
    return write(c);
  };
  const applier = new PlanApplier({ state, commit, nowNanos: hooks.nowNanos ?? (() => NOW), checkToken: hooks.checkToken, sliceMs });
  const job = mockJob({ ID: 'web' });
  const nodes: Node[] = [];
  for (let i = 0; i < NODES; i++) {
    const n = mockNode({ ID: `node-${String(i).padStart(4, '0')}` });
    nodes.push(n);
    write(nodeCmd(n));
  }
  write(registerCmd(job));
  /**
   * Submits a plan while a ticker counts the loop's turns; `atFirstTurn` writes to the live
   * state at the first turn after the check began (while it yields, if it does).
   */
  const submitWhileLoopTurns = async (plan: Plan, atFirstTurn: () => void = () => undefined) => {
    let running = true;
    turns = 0;
    const tick = (): void => {
      if (!running) return;
      if (turns++ === 0) atFirstTurn();
      setImmediate(tick);
    };
    setImmediate(tick);
    try {
      return await applier.submit(plan);
    } finally {
      running = false;
    }
  };
  return { state, write, applier, job, nodes, turnsAtCommit, submitWhileLoopTurns };
}

/** A plan placing `perNode` allocations of 500 MHz on every node. */
function planOnEvery(job: Job, nodes: Node[], perNode = 1, over: Partial<Plan> = {}): Plan {
  const plan = { ...emptyPlan('e1', '', 50, job), ...over };
  for (const n of nodes) plan.NodeAllocation[n.ID] = Array.from({ length: perNode }, () => mockAlloc(job, n, { ClientStatus: 'pending' }));
  return plan;
}

function placedNodes(result: { NodeAllocation: Record<string, Allocation[]> }): string[] {
  return Object.keys(result.NodeAllocation).sort();
}

describe('PlanApplier: the check of a large plan yields to the event loop', () => {
  it('lets the loop turn while it checks a plan of many nodes, and commits what a check in one stretch commits', async () => {
    const sliced = setup(0);
    const r1 = await sliced.submitWhileLoopTurns(planOnEvery(sliced.job, sliced.nodes));
    const straight = setup(Infinity);
    const r2 = await straight.submitWhileLoopTurns(planOnEvery(straight.job, straight.nodes));
    assert.ok(sliced.turnsAtCommit[0]! > 1, `the loop turned ${sliced.turnsAtCommit[0]} times before the commit`);
    assert.equal(straight.turnsAtCommit[0], 0, 'a check that never yields holds the loop until the commit');
    assert.equal(r1.RefreshIndex, 0);
    assert.deepEqual(placedNodes(r1), placedNodes(r2));
    assert.equal(sliced.state.allocs().length, NODES);
  });

  it('refuses the placements on a node marked down or made ineligible while the check yielded, and commits the rest', async () => {
    const h = setup(0);
    const down = h.nodes[NODES - 1]!;
    const ineligible = h.nodes[0]!;
    const result = await h.submitWhileLoopTurns(planOnEvery(h.job, h.nodes), () => {
      h.write({ Type: 'NodeUpdateStatus', NodeID: down.ID, Status: 'down', Event: null, Evals: [], Now: NOW });
      h.write({ Type: 'NodeUpdateEligibility', NodeID: ineligible.ID, Eligibility: 'ineligible', Evals: [], Now: NOW });
    });
    assert.ok(h.turnsAtCommit[0]! > 1);
    assert.equal(result.NodeAllocation[down.ID], undefined);
    assert.equal(result.NodeAllocation[ineligible.ID], undefined);
    assert.equal(Object.keys(result.NodeAllocation).length, NODES - 2);
    assert.ok(result.RefreshIndex >= result.AllocIndex && result.AllocIndex > 0, 'the worker is told to refresh');
    assert.deepEqual(h.applier.lastRejections.map((r) => r.reason).sort(), ['node is down', 'node is not eligible']);
    assert.equal(h.state.allocsByNode(down.ID).length, 0);
    assert.equal(h.state.allocsByNode(ineligible.ID).length, 0);
    assert.equal(h.state.allocs().length, NODES - 2);
  });

  it('never over-commits a node whose capacity was taken while the check yielded', async () => {
    const h = setup(0);
    // 4 × 500 MHz fit on a node of 3,900 MHz free; 4 more written meanwhile leave no room.
    const full = h.nodes[NODES - 1]!;
    const result = await h.submitWhileLoopTurns(planOnEvery(h.job, h.nodes, 4), () => {
      h.write(placeCmd(h.job, full, 4));
    });
    assert.equal(result.NodeAllocation[full.ID], undefined);
    assert.ok(result.RefreshIndex > 0);
    assert.deepEqual(h.applier.lastRejections, [{ nodeId: full.ID, reason: 'cpu exhausted' }]);
    assert.equal(h.state.allocsByNode(full.ID).length, 4, 'only what was written meanwhile runs there');
    assert.equal(h.state.allocs().length, NODES * 4);
  });

  it('drops the whole of an AllAtOnce plan when one of its nodes changed so that it no longer fits', async () => {
    const h = setup(0);
    const down = h.nodes[NODES - 1]!;
    const result = await h.submitWhileLoopTurns(planOnEvery(h.job, h.nodes, 1, { AllAtOnce: true }), () => {
      h.write({ Type: 'NodeUpdateStatus', NodeID: down.ID, Status: 'down', Event: null, Evals: [], Now: NOW });
    });
    assert.deepEqual(result.NodeAllocation, {});
    assert.ok(result.RefreshIndex > 0);
    assert.equal(h.state.allocs().length, 0);
  });

  it('commits a node whose change meanwhile leaves the placements fitting (a heartbeat-free re-registration)', async () => {
    const h = setup(0);
    const n = h.nodes[NODES - 1]!;
    const result = await h.submitWhileLoopTurns(planOnEvery(h.job, h.nodes), () => {
      h.write(nodeCmd({ ...n, Name: 'renamed' }));
    });
    assert.equal(result.RefreshIndex, 0);
    assert.equal(h.state.allocsByNode(n.ID).length, 1);
  });
});

describe('PlanApplier: what lands after the check, while the command is encoded', () => {
  /** A setup whose `later` runs at the loop turn after the command is stamped (its encoding yields then). */
  function setupLater(later: (h: ReturnType<typeof setup>) => void, token = { valid: true }) {
    let stamped = false;
    const h: ReturnType<typeof setup> = setup(0, {
      nowNanos: () => {
        if (!stamped) setImmediate(() => later(h));
        stamped = true;
        return NOW;
      },
      checkToken: () => token.valid,
    });
    return h;
  }

  it('refuses a node marked down or re-registered smaller then, and never over-commits it', async () => {
    const down = 'node-0000';
    const shrunk = 'node-0001';
    const h = setupLater((s) => {
      s.write({ Type: 'NodeUpdateStatus', NodeID: down, Status: 'down', Event: null, Evals: [], Now: NOW });
      const n = s.nodes[1]!;
      s.write(nodeCmd({ ...n, NodeResources: { ...n.NodeResources, Cpu: { ...n.NodeResources.Cpu, CpuShares: 600 } } }));
    });
    const result = await h.applier.submit(planOnEvery(h.job, h.nodes, 4, { EvalToken: 't1' }));
    assert.deepEqual(h.applier.lastRejections.map((r) => r.reason).sort(), ['cpu exhausted', 'node is down']);
    assert.equal(result.NodeAllocation[down], undefined);
    assert.equal(result.NodeAllocation[shrunk], undefined);
    assert.ok(result.RefreshIndex > 0);
    assert.equal(h.state.allocsByNode(down).length, 0);
    assert.equal(h.state.allocsByNode(shrunk).length, 0);
    assert.equal(h.state.allocs().length, (NODES - 2) * 4, 'the payload committed is the reduced plan');
  });

  it('refuses the plan of an evaluation whose token changed then', async () => {
    const token = { valid: true };
    const h = setupLater(() => (token.valid = false), token);
    await assert.rejects(h.applier.submit(planOnEvery(h.job, h.nodes, 1, { EvalToken: 't1' })), { code: 'BAD_TOKEN' });
    assert.equal(h.state.allocs().length, 0);
  });

  it('commits nothing once the applier was closed then (leadership lost)', async () => {
    const h = setupLater((s) => s.applier.close());
    await assert.rejects(h.applier.submit(planOnEvery(h.job, h.nodes)), { code: 'APPLIER_CLOSED' });
    assert.equal(h.state.allocs().length, 0);
  });
});

describe('PlanApplier: a snapshot restored while a plan is checked', () => {
  it('commits nothing of a plan checked partly against the state from before the restore', async () => {
    // The restored state has the first node (checked before the restore) down.
    const other = setup(0);
    other.write({ Type: 'NodeUpdateStatus', NodeID: 'node-0000', Status: 'down', Event: null, Evals: [], Now: NOW });
    const saved = other.state.serialize();
    const h = setup(0);
    await assert.rejects(
      h.submitWhileLoopTurns(planOnEvery(h.job, h.nodes), () => h.state.restoreAt(saved, h.state.latestIndex() + 1)),
      { code: 'STATE_RESTORED' },
    );
    assert.equal(h.state.allocsByNode('node-0000').length, 0);
    assert.equal(h.state.allocs().length, 0);
  });
});

describe('prepareCommand: a plan command encoded a part at a time', () => {
  it('lets the loop turn while it encodes, and writes the very payload encodeCommand writes', async () => {
    const h = setup(0);
    const plan = planOnEvery(h.job, h.nodes, 4);
    const cmd: Command = {
      Type: 'ApplyPlanResults',
      EvalID: plan.EvalID,
      Job: h.job,
      AllocsUpdated: Object.values(plan.NodeAllocation).flat().map((a) => ({ ...a, Job: null })),
      AllocsStopped: [],
      Deployment: null,
      DeploymentUpdates: [],
      Evals: [],
      Now: NOW,
    };
    // A string that looks like the encoder's row-list marker is written as it is.
    cmd.AllocsUpdated[0]!.DesiredDescription = '\u0000rows:0';
    const expected = encodeCommand(cmd);
    let turns = 0;
    let running = true;
    const tick = (): void => {
      if (!running) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await prepareCommand(cmd, 0);
    running = false;
    assert.ok(turns > 1, `the loop turned ${turns} times while the command was encoded`);
    assert.equal(encodeCommand(cmd), expected);
    assert.deepEqual(decodeCommand(expected), JSON.parse(JSON.stringify(cmd)));
  });
});
