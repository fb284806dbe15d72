/**
 * Blocked readers of the state store filed by table: an apply visits and wakes only the readers
 * of what it touched (a node's allocations, a service, a table), a failed apply wakes nobody,
 * and a snapshot loaded by a follower wakes the readers whose tables it moved.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Table, nodeAllocsTableKey, nodeTableKey, serviceTableKey } from '../../src/server/state/state-reader.js';
import type { Allocation } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';

const alloc = (id: string, nodeId: string): Allocation =>
  ({ ID: id, NodeID: nodeId, Namespace: 'default', JobID: 'j', ClientStatus: 'pending', DesiredStatus: 'run', TaskStates: {} }) as unknown as Allocation;

const turns = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** Holds a wait on `tables` after `after`; `done()` tells whether it returned. */
function hold(s: StateStore, tables: Table[], after: number): () => boolean {
  let returned = false;
  void s.waitForChange(tables, after, 60_000).then(() => (returned = true));
  return () => returned;
}

describe('state store watches', () => {
  it('an apply wakes only the watches of what it touched, and counts them', async () => {
    const s = new StateStore();
    const a = hold(s, [nodeAllocsTableKey('a')], 0);
    const b = hold(s, [nodeAllocsTableKey('b')], 0);
    const nodeB = hold(s, [nodeTableKey('b')], 0);
    const svc = hold(s, [serviceTableKey('default', 'web')], 0);
    const evals = hold(s, [Table.Evals], 0);
    assert.equal(s.blockedWatches(), 5);
    s.transact(() => {
      s.putAlloc(alloc('x', 'a'), 5);
      s.finishApply(5);
    });
    await turns();
    assert.deepEqual([a(), b(), nodeB(), svc(), evals()], [true, false, false, false, false]);
    assert.equal(s.tableIndex(nodeAllocsTableKey('a')), 5);
    assert.equal(s.watchWakeups(), 1);

    // A failed apply wakes nobody and leaves the node's index as it was.
    assert.throws(() =>
      s.transact(() => {
        s.putAlloc(alloc('y', 'b'), 6);
        throw new Error('halfway');
      }),
    );
    s.transact(() => s.finishApply(6));
    await turns();
    assert.equal(b(), false);
    assert.equal(s.tableIndex(nodeAllocsTableKey('b')), 0);

    // Moving an allocation from b to a wakes b's watch (a was already answered).
    s.transact(() => {
      s.putAlloc({ ...alloc('x', 'b') }, 7);
      s.finishApply(7);
    });
    await turns();
    assert.equal(b(), true);
    s.transact(() => {
      s.putNode(mockNode({ ID: 'b' }), 8);
      s.finishApply(8);
    });
    await turns();
    assert.deepEqual([nodeB(), svc(), evals()], [true, false, false]);
    assert.equal(s.blockedWatches(), 2);
  });

  it('a snapshot loaded by a follower wakes the watches whose tables it moved', async () => {
    const leader = new StateStore();
    leader.transact(() => {
      leader.putNode(mockNode({ ID: 'n1' }), 4);
      leader.finishApply(4);
    });
    const follower = new StateStore();
    const nodes = hold(follower, [Table.Nodes], 0);
    const record = hold(follower, [nodeTableKey('n1')], 0);
    const evals = hold(follower, [Table.Evals], 0);
    follower.restore(leader.serialize());
    await turns();
    assert.deepEqual([nodes(), record(), evals()], [true, true, false]);
  });
});
