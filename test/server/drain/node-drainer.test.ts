import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DrainFixture } from './drain-fixture.js';
import { StateStore } from '../../../src/server/state/state-store.js';
import { planDrain, drainForced } from '../../../src/server/drain/drain-plan.js';
import { parseDrainRequest, DrainRequestError } from '../../../src/server/drain/node-drain-update.js';
import { GO_ZERO_TIME } from '../../../src/structs/go-time.js';
import { mockBatchJob, mockJob, mockSystemJob, mockTaskGroup } from '../../mock/factories.js';

const HOUR_NS = 3600 * 1e9;

function serviceJob(id: string, count: number, maxParallel: number) {
  return mockJob({ ID: id, TaskGroups: [mockTaskGroup({ Count: count, Migrate: { MaxParallel: maxParallel, HealthCheck: 'checks', MinHealthyTime: 0, HealthyDeadline: 0 } })] });
}

describe('node drain request', () => {
  const rows: { name: string; body: unknown; field?: string }[] = [
    { name: 'null body cancels', body: null },
    { name: 'a spec', body: { DrainSpec: { Deadline: HOUR_NS, IgnoreSystemJobs: true } } },
    { name: 'cancel and mark eligible', body: { DrainSpec: null, MarkEligible: true } },
    { name: 'deadline not a number', body: { DrainSpec: { Deadline: '1h' } }, field: 'DrainSpec.Deadline' },
    { name: 'ignore not a boolean', body: { DrainSpec: { IgnoreSystemJobs: 'yes' } }, field: 'DrainSpec.IgnoreSystemJobs' },
    // What `nomad node drain -enable` sends (MarkEligible = !keep-ineligible): accepted as Nomad does.
    { name: 'mark eligible while enabling a drain', body: { DrainSpec: { Deadline: 0 }, MarkEligible: true } },
    { name: 'mark eligible false while enabling a drain', body: { DrainSpec: { Deadline: 0 }, MarkEligible: false } },
    { name: 'mark eligible not a boolean', body: { DrainSpec: null, MarkEligible: 'yes' }, field: 'MarkEligible' },
    { name: 'meta values are strings', body: { DrainSpec: null, Meta: { a: 1 } }, field: 'Meta.a' },
    { name: 'body an array', body: [], field: 'body' },
  ];
  for (const r of rows) {
    it(r.name, () => {
      if (!r.field) return void parseDrainRequest(r.body);
      assert.throws(() => parseDrainRequest(r.body), (err: unknown) => err instanceof DrainRequestError && err.field === r.field && err.code === 'NODE_DRAIN_INVALID');
    });
  }
});

describe('node drain FSM command', () => {
  it('sets the strategy with deadlines as Nomad, makes the node ineligible, records LastDrain and an event', () => {
    const f = new DrainFixture();
    const n = f.node('a');
    f.drain(n, { DrainSpec: { Deadline: HOUR_NS, IgnoreSystemJobs: false } });
    const d = f.state.nodeById(n.ID)!;
    assert.equal(d.SchedulingEligibility, 'ineligible');
    assert.equal(d.Drain, true);
    assert.equal(d.DrainStrategy?.StartedAt, new Date(f.clock.now()).toISOString());
    assert.equal(d.DrainStrategy?.ForceDeadline, new Date(f.clock.now() + 3_600_000).toISOString());
    assert.equal((d.LastDrain as { Status: string }).Status, 'draining');
    assert.equal(d.Events?.at(-1)?.Message, 'Node drain strategy set');
    assert.equal(drainForced(d, f.clock.now()), false);
    assert.equal(drainForced(d, f.clock.now() + 3_600_000), true);

    f.drain(n, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });
    assert.equal(f.state.nodeById(n.ID)!.DrainStrategy?.ForceDeadline, GO_ZERO_TIME);
    assert.equal(drainForced(f.state.nodeById(n.ID)!, f.clock.now() + 1e12), false);
    f.drain(n, { DrainSpec: { Deadline: -1, IgnoreSystemJobs: false } });
    assert.equal(drainForced(f.state.nodeById(n.ID)!, f.clock.now()), true);

    // Nomad's CLI enables a drain with MarkEligible true: the drain still makes the node ineligible.
    f.drain(n, parseDrainRequest({ DrainSpec: { Deadline: HOUR_NS, IgnoreSystemJobs: false }, MarkEligible: true, Meta: {} }));
    assert.equal(f.state.nodeById(n.ID)!.SchedulingEligibility, 'ineligible');
    assert.equal(f.state.nodeById(n.ID)!.Drain, true);

    f.drain(n, { DrainSpec: null, MarkEligible: true });
    const c = f.state.nodeById(n.ID)!;
    assert.equal(c.DrainStrategy, null);
    assert.equal(c.Drain, false);
    assert.equal(c.SchedulingEligibility, 'eligible');
    assert.equal((c.LastDrain as { Status: string }).Status, 'canceled');
    assert.equal(c.Events?.at(-1)?.Message, 'Node drain disabled');
  });
});

describe('node drainer', () => {
  it('migrates a service group max_parallel at a time, waiting for replacements to run', async () => {
    const f = new DrainFixture();
    const a = f.node('a');
    const b = f.node('b');
    const job = f.job(serviceJob('web', 3, 1));
    f.allocs(job, a, 3);
    f.drain(a, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });

    await f.drainer.tick();
    assert.equal(f.marked().length, 1, 'first batch: one alloc');
    assert.equal(f.evals.length, 1);
    assert.equal(f.evals[0]!.TriggeredBy, 'node-drain');
    await f.drainer.tick();
    assert.equal(f.marked().length, 1, 'nothing more while the mark is pending');

    const r1 = f.migrate(b);
    await f.drainer.tick();
    assert.equal(f.marked().length, 0, 'waits while the replacement is pending');
    f.run(r1);
    await f.drainer.tick();
    assert.equal(f.marked().length, 1, 'next batch once the replacement runs');
    f.run(f.migrate(b));
    await f.drainer.tick();
    f.run(f.migrate(b));
    await f.drainer.tick();
    const node = f.state.nodeById(a.ID)!;
    assert.equal(node.DrainStrategy, null, 'drain complete');
    assert.equal(node.SchedulingEligibility, 'ineligible', 'a completed drain leaves the node ineligible');
    assert.equal(node.Events?.at(-1)?.Message, 'Node drain complete');
    assert.equal((node.LastDrain as { Status: string }).Status, 'complete');
    assert.equal(f.state.allocsByNode(b.ID).filter((x) => x.ClientStatus === 'running').length, 3);
  });

  it('moves several at once with a larger max_parallel', async () => {
    const f = new DrainFixture();
    const a = f.node('a');
    const job = f.job(serviceJob('web', 4, 2));
    f.allocs(job, a, 4);
    f.drain(a, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });
    await f.drainer.tick();
    assert.equal(f.marked().length, 2);
  });

  it('leaves batch allocs to finish and forces everything at the deadline', async () => {
    const f = new DrainFixture();
    const a = f.node('a');
    f.node('b');
    const batch = f.job(mockBatchJob());
    const svc = f.job(serviceJob('web', 2, 1));
    f.allocs(batch, a, 2);
    f.allocs(svc, a, 2);
    f.drain(a, { DrainSpec: { Deadline: HOUR_NS, IgnoreSystemJobs: false } });
    await f.drainer.tick();
    assert.equal(f.marked().length, 1, 'one service alloc, no batch');
    assert.ok(f.state.allocById(f.marked()[0]!)!.JobID === 'web');
    f.clock.advance(3_600_000);
    await f.drainer.tick();
    assert.equal(f.marked().length, 4, 'deadline: everything');
    f.migrate(null);
    await f.drainer.tick();
    assert.equal(f.state.nodeById(a.ID)!.DrainStrategy, null);
  });

  it('forces at once with a negative deadline', async () => {
    const f = new DrainFixture();
    const a = f.node('a');
    f.allocs(f.job(serviceJob('web', 3, 1)), a, 3);
    f.drain(a, { DrainSpec: { Deadline: -1, IgnoreSystemJobs: false } });
    await f.drainer.tick();
    assert.equal(f.marked().length, 3);
  });

  it('drains system allocs last, and never with IgnoreSystemJobs', async () => {
    const f = new DrainFixture();
    const a = f.node('a');
    const sys = f.job(mockSystemJob());
    const svc = f.job(serviceJob('web', 1, 1));
    const [sysAlloc] = f.allocs(sys, a, 1);
    f.allocs(svc, a, 1);
    f.drain(a, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });
    await f.drainer.tick();
    assert.deepEqual(f.marked().map((id) => f.state.allocById(id)!.JobID), ['web']);
    f.migrate(null);
    await f.drainer.tick();
    assert.deepEqual(f.marked(), [sysAlloc!.ID], 'system alloc once nothing else remains');
    f.migrate(null);
    await f.drainer.tick();
    assert.equal(f.state.nodeById(a.ID)!.DrainStrategy, null);

    const g = new DrainFixture();
    const n = g.node('a');
    g.allocs(g.job(mockSystemJob()), n, 1);
    g.drain(n, { DrainSpec: { Deadline: -1, IgnoreSystemJobs: true } });
    await g.drainer.tick();
    assert.equal(g.marked().length, 0, 'system allocs stay');
    assert.equal(g.state.nodeById(n.ID)!.DrainStrategy, null, 'and do not hold the drain open');
  });

  it('does nothing without draining nodes and stops when cancelled', async () => {
    const f = new DrainFixture();
    const a = f.node('a');
    f.allocs(f.job(serviceJob('web', 2, 1)), a, 2);
    assert.deepEqual(planDrain(f.state, f.clock.now()), { migrate: [], complete: [] });
    f.drain(a, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });
    f.drain(a, { DrainSpec: null });
    await f.drainer.tick();
    assert.equal(f.marked().length, 0);
  });

  it('reads no node while none drains, and only the draining one while one does', async () => {
    // Every pass used to copy and sort the whole node table (twice: the plan and the next
    // deadline), draining or not: at 10,000 nodes that was the idle leader's cost of draining.
    const f = new DrainFixture();
    const nodes = Array.from({ length: 2000 }, (_, i) => f.node(`n${i}`));
    const a = nodes[0]!;
    f.allocs(f.job(serviceJob('web', 2, 2)), a, 2);
    let reads = 0;
    const table = f.state.nodesT;
    const [values, get] = [table.values.bind(table), table.get.bind(table)];
    table.values = function* counted() {
      for (const n of values()) {
        reads++;
        yield n;
      }
    } as typeof table.values;
    table.get = ((id: string) => {
      reads++;
      return get(id);
    }) as typeof table.get;
    const passes = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        f.clock.advance(1000);
        await new Promise((r) => setImmediate(r));
      }
    };

    f.drainer.start();
    f.clock.advance(0);
    await passes(5);
    assert.equal(reads, 0, `idle passes over ${nodes.length} nodes read ${reads} of them`);

    f.drain(a, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });
    reads = 0;
    await passes(1);
    assert.equal(f.marked().length, 2, 'the draining node is drained as before');
    assert.ok(reads <= 5, `a pass with one node draining read ${reads} nodes`);
    f.migrate(null);
    reads = 0;
    await passes(1);
    assert.equal(f.state.nodeById(a.ID)!.DrainStrategy, null, 'drain complete');
    reads = 0;
    await passes(3);
    assert.equal(reads, 0, 'idle again once the drain completed');
    f.drainer.stop();
  });

  it("keeps the store's draining nodes through a failed apply and a restore", () => {
    const f = new DrainFixture();
    const [a, b] = [f.node('a'), f.node('b')];
    f.drain(a, { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });
    assert.deepEqual(f.state.drainingNodes().map((n) => n.ID), [a.ID]);
    assert.throws(() =>
      f.state.transact(() => {
        f.state.putNode({ ...f.state.nodeById(a.ID)!, DrainStrategy: null }, f.index + 1);
        f.state.putNode({ ...f.state.nodeById(b.ID)!, DrainStrategy: f.state.nodeById(a.ID)!.DrainStrategy }, f.index + 1);
        throw new Error('apply fails');
      }),
    );
    assert.deepEqual(f.state.drainingNodes().map((n) => n.ID), [a.ID], 'the failed apply changed nothing');
    const copy = new StateStore();
    copy.restore(f.state.serialize());
    assert.deepEqual(copy.drainingNodes().map((n) => n.ID), [a.ID], 'a restored store knows its draining nodes');
    f.drain(a, { DrainSpec: null });
    assert.deepEqual(f.state.drainingNodes(), []);
  });

  it('runs passes on its clock once started, and sooner at a deadline', async () => {
    const f = new DrainFixture();
    const a = f.node('a');
    f.allocs(f.job(mockBatchJob()), a, 1);
    f.drain(a, { DrainSpec: { Deadline: 1.5e9, IgnoreSystemJobs: false } });
    f.drainer.start();
    f.clock.advance(0);
    await new Promise((r) => setImmediate(r));
    assert.equal(f.marked().length, 0, 'batch waits for the deadline');
    f.clock.advance(1000);
    await new Promise((r) => setImmediate(r));
    f.clock.advance(500);
    await new Promise((r) => setImmediate(r));
    assert.equal(f.marked().length, 1, 'forced at the deadline by the timer');
    f.drainer.stop();
  });
});
