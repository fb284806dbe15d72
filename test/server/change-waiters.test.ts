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

describe('woken watches are answered a slice of the loop at a time', () => {
  it('3,000 watches woken by one apply: the loop turns between their answers, each answered once at the index current when it is; the server\'s own waits go first', async () => {
    const N = 3000;
    const s = new StateStore();
    const abort = new AbortController();
    const answeredAt: number[] = new Array<number>(N).fill(0);
    let answered = 0;
    const all = Array.from({ length: N }, (_, i) =>
      // The last 100 may be aborted while queued: they end once, by the abort.
      s.waitForChange([nodeAllocsTableKey(`n${i}`)], 0, 60_000, i >= N - 100 ? abort.signal : undefined).then((index) => {
        // An answer's cost (~0.1 ms: read, serialise, write), paid in the reader's continuation.
        const until = performance.now() + 0.1;
        while (performance.now() < until);
        answeredAt[i] = index;
        answered++;
      }),
    );
    assert.equal(s.blockedWatches(), N);
    s.transact(() => {
      for (let i = 0; i < N; i++) s.putAlloc(alloc(`a${i}`, `n${i}`), 5);
      s.finishApply(5);
    });
    // The server's own wait for an index (a scheduling worker's) is not queued behind the clients' answers.
    let caughtUpAfter = -1;
    void s.waitForIndex(6, 60_000).then(() => (caughtUpAfter = answered));
    // Written while the wakeups are queued: its reader answers with the index current when it reads.
    s.transact(() => {
      s.putAlloc(alloc(`b`, `n${N - 101}`), 6);
      s.finishApply(6);
    });
    abort.abort();
    const nextTurn = new Promise<number>((resolve) => setImmediate(() => resolve(answered)));
    await Promise.all(all);
    const answeredBeforeNextTurn = await nextTurn;
    assert.ok(answeredBeforeNextTurn < N, `the next turn of the loop ran after ${answeredBeforeNextTurn} of ${N} answers`);
    assert.equal(answered, N);
    assert.ok(caughtUpAfter >= 0 && caughtUpAfter < N / 2, `waitForIndex returned after ${caughtUpAfter} of ${N} answers`);
    assert.equal(answeredAt[N - 101], 6, 'a reader woken at 5 answers the index 6 current when it is resolved');
    assert.ok(answeredAt.every((x) => x >= 5));
    assert.equal(s.blockedWatches(), 0, 'no waiter left filed or queued');
    assert.equal(s.watchWakeups(), N - 100 + 1, 'those aborted while queued are not counted as woken (the +1: waitForIndex)');
  });
});
