/**
 * Clients' allocation reports batched on the server as Nomad's Node.UpdateAlloc batches them, under
 * load only: a report arriving while nothing is being applied goes at once (a task start waits for
 * no window), those arriving while a batch is applied become one log entry per window, each caller
 * answered only once that entry is durable; and against a real server, twenty clients reporting at
 * once append one entry, not twenty.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AllocUpdateBatcher } from '../../src/server/endpoints/alloc-update-batcher.js';
import type { AllocClientUpdateCommand } from '../../src/server/fsm/commands.js';
import { Server } from '../../src/server/server.js';
import { Table } from '../../src/server/state/state-reader.js';
import { FakeClock } from '../../src/time/clock.js';
import type { AllocClientUpdate } from '../../src/structs/alloc.js';
import type { Evaluation } from '../../src/structs/index.js';
import { mockJob, mockNode, mockTaskGroup } from '../mock/factories.js';
import { settled } from './settled-server.js';

const update = (id: string): AllocClientUpdate => ({ ID: id, ClientStatus: 'running', TaskStates: {} }) as AllocClientUpdate;
const evalOf = (id: string, jobId: string): Evaluation => ({ ID: id, Namespace: 'default', JobID: jobId }) as Evaluation;
const turns = async (n = 10): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('AllocUpdateBatcher', () => {
  it('applies a report submitted while idle at once, without waiting for the window', async () => {
    const clock = new FakeClock();
    const applied: AllocClientUpdateCommand[] = [];
    const b = new AllocUpdateBatcher({
      clock,
      windowMs: 50,
      nowNanos: () => 7,
      apply: async (cmd) => {
        applied.push(cmd);
        return 41;
      },
    });
    // Two reports of the same turn (e.g. one client's pending report and another's) join.
    const calls = [b.submit([update('a1')], [evalOf('e1', 'web')]), b.submit([update('a2')], [evalOf('e2', 'web')])];
    await turns();
    assert.equal(applied.length, 1, 'applied with the clock never advanced: no window while idle');
    assert.deepEqual(applied[0]!.Allocs.map((u) => u.ID), ['a1', 'a2']);
    assert.deepEqual(applied[0]!.Evals.map((e) => e.ID), ['e1'], 'one evaluation per job');
    assert.deepEqual(await Promise.all(calls), [41, 41]);
    // Idle again once it is applied: the next report goes at once too.
    const next = b.submit([update('a3')], []);
    await turns();
    assert.equal(applied.length, 2);
    assert.equal(await next, 41);
  });

  it('gathers the reports that arrive while a batch is being applied into one command per window, each caller answered once it is durable', async () => {
    const clock = new FakeClock();
    const applied: AllocClientUpdateCommand[] = [];
    const durable: ((index: number) => void)[] = [];
    const b = new AllocUpdateBatcher({
      clock,
      windowMs: 50,
      nowNanos: () => 7,
      apply: (cmd) => {
        applied.push(cmd);
        return new Promise((r) => durable.push(r));
      },
    });
    const answered: number[] = [];
    const first = b.submit([update('a0')], []);
    await turns();
    assert.equal(applied.length, 1, 'the first report goes at once');
    // While it is being applied, reports wait for the window to gather others.
    const calls = [
      b.submit([update('a1')], [evalOf('e1', 'web')]),
      b.submit([update('a2'), update('a3')], [evalOf('e2', 'web'), evalOf('e3', 'db')]),
    ];
    for (const c of calls) void c.then((i) => answered.push(i));
    await clock.advanceAsync(49);
    assert.equal(applied.length, 1, 'nothing more applied before the window closes');
    const late = b.submit([update('a4')], []);
    void late.then((i) => answered.push(i));
    await clock.advanceAsync(1);
    assert.equal(applied.length, 2, 'one command for the whole window');
    assert.deepEqual(applied[1]!.Allocs.map((u) => u.ID), ['a1', 'a2', 'a3', 'a4']);
    assert.deepEqual(applied[1]!.Evals.map((e) => e.ID), ['e1', 'e3'], 'one evaluation per job');
    assert.equal(applied[1]!.Now, 7);
    await turns();
    assert.deepEqual(answered, [], 'no caller answered before the entry is durable');
    durable[0]!(41);
    durable[1]!(42);
    assert.equal(await first, 41);
    assert.deepEqual(await Promise.all([...calls, late]), [42, 42, 42]);
    assert.equal(b.applied(), 2);
  });

  it('a failed apply fails every caller of its batch, and the next batch goes on', async () => {
    const clock = new FakeClock();
    let fail = true;
    const b = new AllocUpdateBatcher({
      clock,
      windowMs: 50,
      nowNanos: () => 0,
      apply: async () => {
        if (fail) throw new Error('not leader');
        return 9;
      },
    });
    const x = assert.rejects(b.submit([update('a1')], []), /not leader/);
    const y = assert.rejects(b.submit([update('a2')], []), /not leader/);
    await Promise.all([x, y]);
    fail = false;
    const z = b.submit([update('a3')], []);
    assert.equal(await z, 9);
  });
});

describe('clients reporting at once against a real server', () => {
  let dir = '';
  let server: Server | undefined;
  afterEach(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('twenty clients reporting together append one log entry and all learn its index', async () => {
    dir = mkdtempSync(join(tmpdir(), 'caravan-alloc-batch-'));
    const s = (server = await settled(await Server.open({ dataDir: dir, numWorkers: 1 })));
    const nodes = Array.from({ length: 20 }, () => mockNode());
    for (const n of nodes) await s.registerNode(n);
    // A system job: one allocation on each node, each reported by its own node.
    const r = await s.registerJob(mockJob({ ID: 'sys', Type: 'system', TaskGroups: [mockTaskGroup({ Name: 'g', Count: 1 })] }));
    for (let i = 0; i < 400 && s.state.evalById(r.evalId)?.Status !== 'complete'; i++) {
      await s.waitForChange([Table.Evals], s.state.latestIndex(), 50);
    }
    const allocs = s.state.allocsByJob('default', 'sys');
    assert.equal(allocs.length, 20);

    const before = s.state.latestIndex();
    const indexes = await Promise.all(
      allocs.map((a) => {
        const node = nodes.find((n) => n.ID === a.NodeID)!;
        return s.updateAllocsFromClient([{ ID: a.ID, ClientStatus: 'running', TaskStates: {} }], node.SecretID).then((x) => x.index);
      }),
    );
    assert.equal(new Set(indexes).size, 1, `every caller answered with the one entry's index: ${indexes.join(',')}`);
    assert.equal(s.state.latestIndex() - before, 1, 'twenty reports made one log entry');
    assert.ok(s.state.allocsByJob('default', 'sys').every((a) => a.ClientStatus === 'running'));
    // A report refused for its caller (a wrong SecretID) is refused alone, before any batch.
    await assert.rejects(s.updateAllocsFromClient([{ ID: allocs[0]!.ID, ClientStatus: 'complete', TaskStates: {} }], 'not-the-secret'));
    assert.equal(s.state.latestIndex() - before, 1);
  });
});
