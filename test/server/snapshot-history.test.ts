import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { CowIndex, EpochClock } from '../../src/server/state/cow-table.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { ApplyPlanResultsCommand, Command } from '../../src/server/fsm/commands.js';
import { decodeCommand, encodeCommand } from '../../src/server/fsm/command-codec.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { NOW, evalCmd, mockEval, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

function fresh(): { state: StateStore; apply: (c: Command) => void } {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  return { state, apply: (c) => void fsm.apply(c, ++index) };
}

describe('snapshot history', () => {
  it('an index read at an old epoch sees the membership of that time', () => {
    const clock = new EpochClock();
    const idx = new CowIndex('i', clock);
    idx.add('k', 'a');
    idx.add('k', 'b');
    const e1 = clock.begin();
    idx.add('k', 'c');
    idx.remove('k', 'a');
    const e2 = clock.begin();
    idx.remove('k', 'b');
    idx.add('k', 'a');
    idx.add('other', 'x');
    assert.deepEqual([...idx.getAt(e1, 'k')].sort(), ['a', 'b']);
    assert.deepEqual([...idx.getAt(e2, 'k')].sort(), ['b', 'c']);
    assert.deepEqual([...idx.get('k')].sort(), ['a', 'c']);
    assert.deepEqual([...idx.getAt(e1, 'other')], []);
    assert.deepEqual([...idx.get('other')], ['x']);
  });

  it('an index key with no members when an epoch began reads empty at that epoch, whatever comes after', () => {
    const clock = new EpochClock();
    const idx = new CowIndex('i', clock);
    idx.add('k', 'a');
    const e1 = clock.begin();
    idx.remove('k', 'a'); // k has no members now
    const e2 = clock.begin();
    // First changes of k in e2 while it is empty (one mark), then more in e2 and a later epoch.
    idx.add('k', 'b');
    idx.add('k', 'a');
    idx.add('fresh', 'x');
    idx.add('fresh', 'y');
    const e3 = clock.begin();
    idx.remove('k', 'b');
    idx.add('k', 'c');
    idx.remove('fresh', 'x');
    assert.deepEqual([...idx.getAt(e1, 'k')], ['a']);
    assert.deepEqual([...idx.getAt(e2, 'k')], []);
    assert.deepEqual([...idx.getAt(e3, 'k')].sort(), ['a', 'b']);
    assert.deepEqual([...idx.get('k')].sort(), ['a', 'c']);
    assert.deepEqual([...idx.getAt(e1, 'fresh')], []);
    assert.deepEqual([...idx.getAt(e2, 'fresh')], []);
    assert.deepEqual([...idx.getAt(e3, 'fresh')].sort(), ['x', 'y']);
    assert.deepEqual([...idx.get('fresh')], ['y']);
  });

  it('a snapshot taken before a plan sees none of its placements on nodes that held nothing', () => {
    const { state, apply } = fresh();
    const job = mockJob({ ID: 'web' });
    const nodes = [mockNode(), mockNode(), mockNode()];
    for (const n of nodes) apply(nodeCmd(n));
    apply(registerCmd(job));
    apply(placeCmd(job, nodes[0]!, 1));
    const snap = state.snapshot();
    apply(placeCmd(job, nodes[1]!, 2));
    apply(placeCmd(job, nodes[2]!, 1));
    assert.equal(snap.allocsByNode(nodes[0]!.ID).length, 1);
    assert.deepEqual(snap.allocsByNode(nodes[1]!.ID), []);
    assert.deepEqual(snap.allocsByNode(nodes[2]!.ID), []);
    assert.equal(snap.allocsByJob('default', 'web').length, 1);
    assert.equal(state.allocsByNode(nodes[1]!.ID).length, 2);
    assert.equal(state.allocsByJob('default', 'web').length, 4);
  });

  it('a snapshot reports node usage as of its index', () => {
    const { state, apply } = fresh();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    apply(nodeCmd(node));
    apply(registerCmd(job));
    apply(placeCmd(job, node, 2));
    const snap = state.snapshot();
    const before = snap.nodeAllocatedUsage(node.ID);
    assert.equal(before.cpu, 1000);
    assert.equal(before.memory, 512);
    const first = state.allocsByNode(node.ID)[0]!;
    apply(placeCmd(job, node, 1));
    apply({
      Type: 'AllocClientUpdate',
      Allocs: [{ ID: first.ID, NodeID: node.ID, ClientStatus: 'failed', ClientDescription: '', TaskStates: {} }],
      Evals: [],
      Now: NOW,
    });
    assert.deepEqual(snap.nodeAllocatedUsage(node.ID), before);
    assert.equal(state.snapshot().nodeAllocatedUsage(node.ID).cpu, 1000);
    assert.equal(state.nodeUsage.get(node.ID).totals.cpu, 1000);
    assert.equal(state.snapshot().nodeAllocatedUsage('no-such-node').cpu, 0);
  });

  it('the log codec packs plan placements and decodes them to the same command', () => {
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    const cmd = placeCmd(job, node, 5);
    const shared = cmd.AllocsUpdated[0]!.AllocatedResources;
    cmd.AllocsUpdated = cmd.AllocsUpdated.map((a) => ({ ...a, AllocatedResources: shared }));
    const payload = encodeCommand(cmd);
    assert.ok(payload.includes('PackedAllocs'));
    assert.ok(payload.length < JSON.stringify(cmd).length);
    assert.deepEqual(decodeCommand(payload), JSON.parse(JSON.stringify(cmd)) as ApplyPlanResultsCommand);
  });

  it('the log codec writes other commands and odd allocations as plain JSON', () => {
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    const few = placeCmd(job, node, 2);
    assert.deepEqual(decodeCommand(encodeCommand(few)), JSON.parse(JSON.stringify(few)) as Command);
    const odd = placeCmd(job, node, 6);
    (odd.AllocsUpdated[3] as unknown as Record<string, unknown>).Extra = 1;
    assert.ok(!encodeCommand(odd).includes('PackedAllocs'));
    assert.deepEqual(decodeCommand(encodeCommand(odd)), JSON.parse(JSON.stringify(odd)) as Command);
    const ev = evalCmd([mockEval(job)]);
    assert.deepEqual(decodeCommand(encodeCommand(ev)), JSON.parse(JSON.stringify(ev)) as Command);
  });

  it('replaying encoded commands rebuilds the same state', () => {
    const a = fresh();
    const b = fresh();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    const cmds: Command[] = [nodeCmd(node), registerCmd(job), placeCmd(job, node, 8), placeCmd(job, node, 1)];
    for (const c of cmds) {
      a.apply(c);
      b.apply(decodeCommand(encodeCommand(c)));
    }
    assert.deepEqual(b.state.serialize(), a.state.serialize());
  });
});
