import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore, JOB_VERSIONS_KEPT } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { Table } from '../../src/server/state/state-reader.js';
import { mockBatchJob, mockJob, mockNode } from '../mock/factories.js';
import { NOW, evalCmd, mockEval, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

function fresh() {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  const apply = (c: Command) => fsm.apply(c, ++index);
  return { state, fsm, apply, at: () => index };
}

describe('state store and FSM', () => {
  it('versions a job only when its spec changes and keeps the last 6 versions', () => {
    const { state, apply } = fresh();
    const job = mockJob({ ID: 'web' });
    apply(registerCmd(job));
    let stored = state.jobById('default', 'web')!;
    assert.equal(stored.Version, 0);
    assert.equal(stored.CreateIndex, 1);
    assert.equal(stored.JobModifyIndex, 1);
    apply(registerCmd(job));
    stored = state.jobById('default', 'web')!;
    assert.equal(stored.Version, 0);
    assert.equal(stored.JobModifyIndex, 1);
    assert.equal(stored.ModifyIndex, 2);
    for (let i = 0; i < 8; i++) apply(registerCmd({ ...job, Meta: { v: String(i) } }));
    stored = state.jobById('default', 'web')!;
    assert.equal(stored.Version, 8);
    assert.equal(stored.JobModifyIndex, 10);
    assert.equal(stored.CreateIndex, 1);
    const versions = state.jobVersions('default', 'web');
    assert.equal(versions.length, JOB_VERSIONS_KEPT);
    assert.deepEqual(versions.map((v) => v.Version), [8, 7, 6, 5, 4, 3]);
  });

  it('indexes allocs by node and job, keeps summaries and the job status', () => {
    const { state, apply, at } = fresh();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    apply(nodeCmd(node));
    const ev = mockEval(job);
    apply(registerCmd(job, ev));
    assert.equal(state.jobById('default', 'web')?.Status, 'pending');
    apply(evalCmd([{ ...ev, Status: 'complete', QueuedAllocations: { web: 3 } }]));
    assert.equal(state.jobSummary('default', 'web')?.Summary.web?.Queued, 3);
    const place = placeCmd(job, node, 3);
    apply(place);
    assert.equal(state.allocsByNode(node.ID).length, 3);
    assert.equal(state.allocsByJob('default', 'web').length, 3);
    const summary = state.jobSummary('default', 'web')!.Summary.web!;
    assert.equal(summary.Starting, 3);
    assert.equal(summary.Queued, 0);
    assert.equal(state.jobById('default', 'web')?.Status, 'running');
    const a = state.allocsByJob('default', 'web')[0]!;
    assert.equal(a.CreateIndex, at());
    assert.equal(a.AllocModifyIndex, at());
    assert.equal(a.Job?.Version, state.jobById('default', 'web')?.Version);
    apply({
      Type: 'AllocClientUpdate',
      Allocs: [{ ID: a.ID, NodeID: node.ID, ClientStatus: 'running', ClientDescription: '', TaskStates: {} }],
      Evals: [],
      Now: NOW,
    });
    const after = state.allocById(a.ID)!;
    assert.equal(after.ModifyIndex, at());
    assert.equal(after.AllocModifyIndex, a.AllocModifyIndex, 'client updates keep AllocModifyIndex');
    assert.equal(state.jobSummary('default', 'web')!.Summary.web!.Running, 1);
    assert.equal(state.tableIndex(Table.Allocs), at());
  });

  it('marks a batch job dead once all allocs completed and evals are terminal', () => {
    const { state, apply } = fresh();
    const job = mockBatchJob({ ID: 'b' });
    const node = mockNode();
    apply(nodeCmd(node));
    const ev = mockEval(job);
    apply(registerCmd(job, ev));
    apply(placeCmd(job, node, 2));
    apply(evalCmd([{ ...ev, Status: 'complete' }]));
    assert.equal(state.jobById('default', 'b')?.Status, 'running');
    const updates = state.allocsByJob('default', 'b').map((a) => ({
      ID: a.ID,
      NodeID: node.ID,
      ClientStatus: 'complete' as const,
      ClientDescription: '',
      TaskStates: {},
    }));
    apply({ Type: 'AllocClientUpdate', Allocs: updates, Evals: [], Now: NOW });
    assert.equal(state.jobById('default', 'b')?.Status, 'dead');
    assert.equal(state.jobSummary('default', 'b')!.Summary[job.TaskGroups[0]!.Name]!.Complete, 2);
  });

  it('a stopped job is dead; purge removes it', () => {
    const { state, apply } = fresh();
    const job = mockJob({ ID: 'web' });
    apply(registerCmd(job));
    apply({ Type: 'JobDeregister', Namespace: 'default', JobID: 'web', Purge: false, Eval: null, Now: NOW });
    const stopped = state.jobById('default', 'web')!;
    assert.equal(stopped.Stop, true);
    assert.equal(stopped.Status, 'dead');
    assert.equal(stopped.Version, 1);
    apply({ Type: 'JobDeregister', Namespace: 'default', JobID: 'web', Purge: true, Eval: null, Now: NOW });
    assert.equal(state.jobById('default', 'web'), undefined);
  });

  it('snapshots do not see later writes', () => {
    const { state, apply } = fresh();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    apply(nodeCmd(node));
    apply(registerCmd(job));
    apply(placeCmd(job, node, 2));
    const snap = state.snapshot();
    const before = snap.allocsByNode(node.ID).map((a) => a.ID).sort();
    const first = state.allocsByNode(node.ID)[0]!;
    apply(placeCmd(job, node, 1));
    apply({
      Type: 'AllocClientUpdate',
      Allocs: [{ ID: first.ID, NodeID: node.ID, ClientStatus: 'failed', ClientDescription: '', TaskStates: {} }],
      Evals: [],
      Now: NOW,
    });
    apply({ Type: 'NodeUpdateStatus', NodeID: node.ID, Status: 'down', Event: null, Evals: [], Now: NOW });
    assert.deepEqual(snap.allocsByNode(node.ID).map((a) => a.ID).sort(), before);
    assert.equal(snap.allocById(first.ID)?.ClientStatus, 'pending');
    assert.equal(snap.nodeById(node.ID)?.Status, 'ready');
    assert.equal([...snap.nodes()].length, 1);
    assert.equal(state.allocsByNode(node.ID).length, 3);
    assert.equal(state.snapshot().allocById(first.ID)?.ClientStatus, 'failed');
  });

  it('waitForChange resolves when a watched table moves past the index', async () => {
    const { state, apply, at } = fresh();
    apply(registerCmd(mockJob({ ID: 'a' })));
    const idx = at();
    const waiting = state.waitForChange([Table.Nodes], idx, 10_000);
    apply(registerCmd(mockJob({ ID: 'b' })));
    apply(nodeCmd(mockNode()));
    assert.equal(await waiting, at());
    const ac = new AbortController();
    const aborted = state.waitForChange([Table.Evals], at(), 10_000, ac.signal);
    ac.abort();
    assert.equal(await aborted, 0);
  });

  it('is deterministic: replaying serialized commands yields the same state', () => {
    const a = fresh();
    const b = fresh();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    const ev = mockEval(job);
    const cmds: Command[] = [nodeCmd(node), registerCmd(job, ev), placeCmd(job, node, 4), evalCmd([{ ...ev, Status: 'complete' }])];
    for (const c of cmds) {
      a.apply(c);
      b.apply(JSON.parse(JSON.stringify(c)) as Command);
    }
    assert.deepEqual(JSON.parse(JSON.stringify(a.state.serialize())), JSON.parse(JSON.stringify(b.state.serialize())));
  });

  it('restores from its serialized form', () => {
    const a = fresh();
    const job = mockJob({ ID: 'web' });
    const node = mockNode();
    a.apply(nodeCmd(node));
    a.apply(registerCmd(job));
    a.apply(placeCmd(job, node, 2));
    const copy = new StateStore();
    copy.restore(JSON.parse(JSON.stringify(a.state.serialize())));
    assert.equal(copy.latestIndex(), a.state.latestIndex());
    assert.equal(copy.allocsByNode(node.ID).length, 2);
    assert.equal(copy.allocsByNode(node.ID)[0]?.Job?.ID, 'web');
    assert.deepEqual(copy.nodeUsage.get(node.ID), a.state.nodeUsage.get(node.ID));
  });
});
