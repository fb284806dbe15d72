import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { decodeCommand, encodeCommand } from '../../src/server/fsm/command-codec.js';
import { captureState, encodeSnapshot } from '../../src/server/snapshot/snapshot-encoder.js';
import { decodeSnapshot } from '../../src/server/snapshot/snapshot-decoder.js';
import { CompactAllocMetric } from '../../src/server/state/compact-metric.js';
import { newDeployment } from '../../src/scheduler/deployment-rollout.js';
import type { AllocMetric, Deployment } from '../../src/structs/index.js';
import { mockAllocMetric, mockJob, mockNode } from '../mock/factories.js';
import { nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

function fresh(): { state: StateStore; apply: (c: Command) => ReturnType<Fsm['apply']> } {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  // Through the log's text form, as the server applies every command.
  return { state, apply: (c) => fsm.apply(decodeCommand(encodeCommand(c)), ++index) };
}

/** A metric as the scheduler writes it for a placement on `nodeId`. */
function schedulerMetric(nodeId: string, score: number, available: Record<string, number>): AllocMetric {
  return mockAllocMetric({
    NodesEvaluated: 7,
    NodesFiltered: 2,
    NodesInPool: 10,
    NodesAvailable: available,
    ConstraintFiltered: { 'missing drivers': 2 },
    ScoreMetaData: [{ NodeID: nodeId, Scores: { normalized: score }, NormScore: score }],
  });
}

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

describe('compact allocation state', () => {
  it('stores placement metrics compactly and answers, and serializes, the full metric', () => {
    const { state, apply } = fresh();
    const node = mockNode();
    apply(nodeCmd(node));
    const job = mockJob({ ID: 'web' });
    apply(registerCmd(job));
    const cmd = placeCmd(state.jobById('default', 'web')!, node, 4);
    const available = { dc1: 1 };
    const metrics = cmd.AllocsUpdated.map((_, i) => schedulerMetric(node.ID, 0.5 + i / 10, available));
    // One allocation with a score list the compact form does not special-case.
    metrics[3] = { ...metrics[3]!, ScoreMetaData: [{ NodeID: node.ID, Scores: { binpack: 0.3, normalized: 0.2 }, NormScore: 0.2 }] };
    cmd.AllocsUpdated.forEach((a, i) => (a.Metrics = metrics[i]!));
    apply(cmd);
    for (const [i, a] of cmd.AllocsUpdated.entries()) {
      const stored = state.allocById(a.ID)!;
      assert.ok(stored.Metrics instanceof CompactAllocMetric);
      assert.deepEqual(plain(stored.Metrics), plain(metrics[i]));
      assert.deepEqual(stored.Metrics.ScoreMetaData, metrics[i]!.ScoreMetaData);
      assert.deepEqual(stored.Metrics.ConstraintFiltered, { 'missing drivers': 2 });
      assert.equal(stored.Metrics.NodesEvaluated, 7);
      assert.equal(stored.NodeID, node.ID);
      assert.equal(stored.NodeName, node.Name);
    }
    // The plain fields appear in Nomad's order in the JSON the API writes.
    const json = JSON.parse(JSON.stringify(state.allocById(cmd.AllocsUpdated[0]!.ID))) as { Metrics: Record<string, unknown> };
    assert.deepEqual(Object.keys(json.Metrics), Object.keys(metrics[0]!));
  });

  it('restores compact metrics from a snapshot as they were', async () => {
    const { state, apply } = fresh();
    const node = mockNode();
    apply(nodeCmd(node));
    apply(registerCmd(mockJob({ ID: 'web' })));
    const cmd = placeCmd(state.jobById('default', 'web')!, node, 6);
    cmd.AllocsUpdated.forEach((a, i) => (a.Metrics = schedulerMetric(node.ID, i / 6, { dc1: 1 })));
    apply(cmd);
    const restored = new StateStore();
    restored.restore(await decodeSnapshot(encodeSnapshot(captureState(state), 4)));
    for (const a of state.allocs()) {
      const back = restored.allocById(a.ID)!;
      assert.ok(back.Metrics instanceof CompactAllocMetric);
      assert.deepEqual(plain(back.Metrics), plain(a.Metrics));
    }
  });

  it('publishes one event per deployment for a plan, carrying every placement it counted', () => {
    const { state, apply } = fresh();
    const node = mockNode();
    apply(nodeCmd(node));
    apply(registerCmd(mockJob({ ID: 'web' })));
    const job = state.jobById('default', 'web')!;
    const group = job.TaskGroups[0]!;
    const d: Deployment = {
      ...newDeployment(job, 'd-1'),
      TaskGroups: {
        [group.Name]: {
          AutoRevert: false,
          AutoPromote: false,
          ProgressDeadline: 0,
          RequireProgressBy: null,
          Promoted: false,
          PlacedCanaries: null,
          DesiredCanaries: 0,
          DesiredTotal: 5,
          PlacedAllocs: 0,
          HealthyAllocs: 0,
          UnhealthyAllocs: 0,
        },
      },
    };
    const cmd = { ...placeCmd(job, node, 5, { DeploymentID: 'd-1' }), Deployment: d };
    const events = apply(cmd);
    const deploymentEvents = events.filter((e) => e.Topic === 'Deployment');
    assert.equal(deploymentEvents.length, 1);
    const payload = deploymentEvents[0]!.Payload as { Deployment: Deployment };
    assert.equal(payload.Deployment.TaskGroups[group.Name]!.PlacedAllocs, 5);
    assert.deepEqual(plain(payload.Deployment), plain(state.deploymentById('d-1')));
    assert.equal(events.filter((e) => e.Topic === 'Allocation').length, 5);
  });
});
