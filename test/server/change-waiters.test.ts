/**
 * Blocked readers of the state store filed by table: an apply visits and wakes only the readers
 * of what it touched (a node's allocations, a service, a table, one object), a failed apply wakes
 * nobody, and a snapshot loaded by a follower wakes the readers whose tables it moved.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Table, jobAllocsTableKey, nodeAllocsTableKey, nodeTableKey, serviceTableKey } from '../../src/server/state/state-reader.js';
import { allocTableKey } from '../../src/server/state/object-tables.js';
import type { Allocation } from '../../src/structs/index.js';
import { mockAllocMetric, mockNode } from '../mock/factories.js';

const alloc = (id: string, nodeId: string, modifyIndex = 0): Allocation =>
  ({ ID: id, NodeID: nodeId, Namespace: 'default', JobID: 'j', ClientStatus: 'pending', DesiredStatus: 'run', TaskStates: {}, ModifyIndex: modifyIndex }) as unknown as Allocation;

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

  it("one allocation's watch: its ModifyIndex, woken by its own writes and its deletion only", async () => {
    const s = new StateStore();
    const apply = (index: number, fn: () => void): void =>
      s.transact(() => {
        fn();
        s.finishApply(index);
      });
    apply(3, () => {
      s.putAlloc(alloc('x', 'n', 3), 3);
      s.putAlloc(alloc('y', 'n', 3), 3);
    });
    assert.equal(s.tableIndex(allocTableKey('x')), 3);
    assert.equal(s.tableIndex(allocTableKey('nope')), 3, "an absent allocation: the table's index");
    const x = hold(s, [allocTableKey('x')], 3);
    const jobAllocs = hold(s, [jobAllocsTableKey('default', 'j')], 3);
    apply(4, () => s.putAlloc(alloc('y', 'n', 4), 4));
    await turns();
    assert.deepEqual([x(), jobAllocs()], [false, true], "another allocation's write wakes the job's list only");
    assert.equal(s.watchWakeups(), 1);
    assert.equal(s.tableIndex(allocTableKey('x')), 3);

    apply(5, () => s.deleteAlloc('x', 5));
    await turns();
    assert.equal(x(), true, 'its deletion wakes it');
    assert.equal(s.tableIndex(allocTableKey('x')), 5, "gone: the table's index");

    // After a snapshot restored into the cluster, an allocation's index is at least the restore's.
    s.restoreAt({ ...s.serialize(), allocs: [{ alloc: { ...alloc('y', 'n', 4), Metrics: mockAllocMetric() }, jobVersion: null }] }, 9);
    assert.equal(s.tableIndex(allocTableKey('y')), 9);
    assert.equal(s.tableIndex(jobAllocsTableKey('default', 'j')), 9);
  });
});
