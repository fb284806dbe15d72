import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import type { AllocClientUpdate } from '../../src/structs/alloc.js';
import type { Allocation, Job, Node } from '../../src/structs/index.js';
import { mockBatchJob, mockNode } from '../mock/factories.js';
import { NOW, evalCmd, mockEval, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

function fresh() {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  const apply = (c: Command) => fsm.apply(c, ++index);
  return { state, fsm, apply, next: () => ++index };
}

function report(allocs: Allocation[], node: Node, ClientStatus: AllocClientUpdate['ClientStatus']): Command {
  return { Type: 'AllocClientUpdate', Allocs: allocs.map((a) => ({ ID: a.ID, NodeID: node.ID, ClientStatus, ClientDescription: '', TaskStates: {} })), Evals: [], Now: NOW };
}

/** A batch job with `done` completed allocations, then `live` pending ones, its eval complete. */
function seeded(done: number, live: number) {
  const s = fresh();
  const job: Job = mockBatchJob({ ID: 'b' });
  const node = mockNode();
  s.apply(nodeCmd(node));
  const ev = mockEval(job);
  s.apply(registerCmd(job, ev));
  s.apply(placeCmd(job, node, done));
  s.apply(report(s.state.allocsByJob('default', 'b'), node, 'complete'));
  s.apply(placeCmd(job, node, live));
  s.apply(evalCmd([{ ...ev, Status: 'complete' }]));
  const liveAllocs = s.state.allocsByJob('default', 'b').filter((a) => a.ClientStatus === 'pending');
  return { ...s, job, node, liveAllocs };
}

describe("a job's status after an apply", () => {
  it('is derived without reading the job\'s terminal allocations or evaluations', () => {
    // The job's 3,000 completed allocations come first in its index, as a rolled or long-lived
    // job's do: each apply touching the job used to read every one of them (and its terminal
    // evaluations) to learn whether any allocation was still live.
    const { state, apply, node, liveAllocs } = seeded(3000, 1);
    for (let i = 0; i < 200; i++) apply(evalCmd([{ ...mockEval(mockBatchJob({ ID: 'b' })), Status: 'complete' }]));
    let reads = 0;
    const count = <T extends { get(k: string): unknown }>(t: T): void => {
      const get = t.get.bind(t);
      t.get = ((k: string) => {
        reads++;
        return get(k);
      }) as T['get'];
    };
    count(state.allocsT);
    count(state.evalsT);
    apply(report(liveAllocs, node, 'running'));
    assert.equal(state.jobById('default', 'b')?.Status, 'running');
    assert.ok(reads < 20, `one client report read ${reads} allocations and evaluations`);
    reads = 0;
    apply(report(liveAllocs, node, 'complete'));
    assert.equal(state.jobById('default', 'b')?.Status, 'dead');
    assert.ok(reads < 20, `one client report read ${reads} allocations and evaluations`);
  });

  it('follows live allocations and evaluations: pending, running, dead, pending again on a new eval', () => {
    const { state, apply, node, job } = seeded(2, 0);
    assert.equal(state.jobById('default', 'b')?.Status, 'dead');
    const ev = mockEval(job);
    apply(evalCmd([ev]));
    assert.equal(state.jobById('default', 'b')?.Status, 'pending');
    apply(placeCmd(job, node, 1));
    assert.equal(state.jobById('default', 'b')?.Status, 'running');
    const [a] = state.allocsByJob('default', 'b').filter((x) => x.ClientStatus === 'pending');
    apply(report([a!], node, 'failed'));
    assert.equal(state.jobById('default', 'b')?.Status, 'pending', 'the eval is still live');
    apply(evalCmd([{ ...ev, Status: 'complete' }]));
    assert.equal(state.jobById('default', 'b')?.Status, 'dead');
  });

  it('is right after a failed apply was rolled back and after a restore', () => {
    const { state, fsm, next, node, job, liveAllocs } = seeded(1, 1);
    // Two placements, then one whose resources make node accounting throw: all three undone.
    const bad = placeCmd(job, node, 3);
    bad.AllocsUpdated[2] = { ...bad.AllocsUpdated[2]!, AllocatedResources: { Tasks: null, Shared: { Ports: [{ Label: 'x', Value: 8080 }] } } as never };
    assert.throws(() => fsm.apply(bad, next()));
    const copy = new StateStore();
    copy.restore(JSON.parse(JSON.stringify(state.serialize())));
    const copyFsm = new Fsm(copy);
    const done = report(liveAllocs, node, 'complete');
    const i = next();
    fsm.apply(done, i);
    copyFsm.apply(done, i);
    // Had the undone placements stayed live, the job would still be running.
    assert.equal(state.jobById('default', 'b')?.Status, 'dead');
    assert.equal(copy.jobById('default', 'b')?.Status, 'dead');
  });
});
