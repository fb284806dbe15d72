/**
 * A client's report cannot move an allocation whose client status is terminal (complete, failed,
 * lost) back to a non-terminal one: the FSM's apply of AllocClientUpdate drops it whole, so the
 * node's usage, the job summary and the allocation stay as the terminal status left them. The
 * legitimate paths stay open: unknown → running (a reconnect), terminal → terminal, and a
 * report on a live allocation.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import type { AllocClientStatus, Allocation } from '../../src/structs/alloc.js';
import { revivesTerminalAlloc } from '../../src/server/client-status-revival.js';
import { mockBatchJob, mockNode } from '../mock/factories.js';
import { NOW, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

/** A plan result by which the server marks an allocation (lost, unknown), as the scheduler does for a down node. */
function serverMarks(a: Allocation): Command {
  return { Type: 'ApplyPlanResults', EvalID: 'e', Job: null, AllocsUpdated: [{ ...a, Job: null }], AllocsStopped: [], Deployment: null, DeploymentUpdates: [], Evals: [], Now: NOW };
}

function fixture() {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  const apply = (c: Command) => fsm.apply(c, ++index);
  const job = mockBatchJob({ ID: 'b' });
  const node = mockNode();
  apply(nodeCmd(node));
  apply(registerCmd(job));
  apply(placeCmd(job, node, 3));
  const ids = state.allocsByNode(node.ID).map((a) => a.ID);
  const report = (updates: [string, AllocClientStatus][]) =>
    apply({ Type: 'AllocClientUpdate', Allocs: updates.map(([ID, ClientStatus]) => ({ ID, NodeID: node.ID, ClientStatus, ClientDescription: `reported ${ClientStatus}`, TaskStates: {} })), Evals: [], Now: NOW });
  const status = (id: string) => state.allocById(id)!.ClientStatus;
  const cpu = () => state.snapshot().nodeAllocatedUsage(node.ID).cpu;
  return { state, apply, job, node, ids, report, status, cpu };
}

describe('client status revival', () => {
  it('a complete or failed allocation reported running stays terminal; the node usage does not grow', () => {
    const f = fixture();
    const [a, b, c] = f.ids as [string, string, string];
    const perAlloc = f.cpu() / 3;
    assert.ok(perAlloc > 0);
    f.report([[a, 'complete'], [b, 'failed'], [c, 'running']]);
    assert.equal(f.cpu(), perAlloc, 'only the running allocation holds resources');
    const before = f.state.allocById(a)!;
    const summary = structuredClone(f.state.jobSummary('default', 'b'));

    // One batch: two revivals and a legitimate report, which still lands.
    f.report([[a, 'running'], [b, 'pending'], [c, 'complete']]);
    assert.equal(f.status(a), 'complete');
    assert.equal(f.status(b), 'failed');
    assert.equal(f.status(c), 'complete');
    assert.equal(f.state.allocById(a)!.ClientDescription, before.ClientDescription, 'the dropped report changes no field');
    assert.equal(f.state.allocById(a)!.ModifyIndex, before.ModifyIndex);
    assert.equal(f.cpu(), 0);
    const after = f.state.jobSummary('default', 'b')!.Summary[f.job.TaskGroups[0]!.Name]!;
    assert.equal(after.Running, 0);
    assert.equal(after.Complete, (summary!.Summary[f.job.TaskGroups[0]!.Name]!.Complete) + 1);
    assert.equal(after.Failed, 1);
  });

  it('a lost allocation stays lost when its client reports it running, and takes a terminal report', () => {
    const f = fixture();
    const [a] = f.ids as [string];
    f.apply(serverMarks({ ...f.state.allocById(a)!, ClientStatus: 'lost', DesiredStatus: 'stop' }));
    assert.equal(f.status(a), 'lost');
    f.report([[a, 'running']]);
    assert.equal(f.status(a), 'lost');
    f.report([[a, 'complete']]);
    assert.equal(f.status(a), 'complete', 'terminal to terminal is the client stopping it');
  });

  it('unknown → running (a reconnect) and reports on live allocations are accepted', () => {
    const f = fixture();
    const [a, b] = f.ids as [string, string];
    f.report([[a, 'running'], [b, 'running']]);
    f.apply(serverMarks({ ...f.state.allocById(a)!, ClientStatus: 'unknown' }));
    assert.equal(f.status(a), 'unknown');
    f.report([[a, 'running'], [b, 'running']]);
    assert.equal(f.status(a), 'running');
    assert.equal(f.status(b), 'running');
  });

  it('the rule: terminal to non-terminal only', () => {
    const all: AllocClientStatus[] = ['pending', 'running', 'complete', 'failed', 'lost', 'unknown'];
    const revivals = all.flatMap((p) => all.filter((n) => revivesTerminalAlloc({ ClientStatus: p }, n)).map((n) => `${p}→${n}`));
    assert.deepEqual(revivals.sort(), ['complete→pending', 'complete→running', 'complete→unknown', 'failed→pending', 'failed→running', 'failed→unknown', 'lost→pending', 'lost→running', 'lost→unknown'].sort());
  });
});
