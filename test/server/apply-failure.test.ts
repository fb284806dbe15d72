import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, type ServerConfig } from '../../src/server/server.js';
import { ServerError } from '../../src/server/server-error.js';
import { Table, jobAllocsTableKey, nodeAllocsTableKey } from '../../src/server/state/state-reader.js';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import type { Job } from '../../src/structs/index.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { fakeSchedulerFactory } from './fake-scheduler.js';
import { NOW, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';
import { settled } from './settled-server.js';

const dirs: string[] = [];
const open: Server[] = [];

async function start(over: Partial<ServerConfig> = {}): Promise<Server> {
  const dataDir = over.dataDir ?? mkdtempSync(join(tmpdir(), 'caravan-apply-'));
  if (!over.dataDir) dirs.push(dataDir);
  const s = await Server.open({ dataDir, numWorkers: 0, schedulerFactory: () => fakeSchedulerFactory, ...over });
  open.push(s);
  return settled(s);
}

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A JobRegister that passes the pre-append check but makes the FSM throw halfway (after putJob's first write). */
function poisonRegister(id: string): Command {
  const job = mockJob({ ID: id });
  // A null group, as a corrupt entry would decode (JSON carries no types).
  const groups = JSON.parse('[null]') as Job['TaskGroups'];
  return registerCmd({ ...job, TaskGroups: groups });
}

describe('FSM apply is all or nothing', () => {
  it('rolls back a command that throws halfway, including node usage and indexes', () => {
    const store = new StateStore();
    const fsm = new Fsm(store);
    const node = mockNode();
    const job = mockJob({ ID: 'web' });
    fsm.apply(nodeCmd(node), 1);
    fsm.apply(registerCmd(job), 2);
    fsm.apply(placeCmd(job, node, 1), 3);
    const usageBefore = structuredClone(store.nodeUsage.get(node.ID));
    const jobsIndex = store.tableIndex(Table.Jobs);
    const older = store.snapshot();
    // Two good placements, then one whose resources make node accounting throw.
    const bad = placeCmd(job, node, 3);
    bad.AllocsUpdated[2] = { ...bad.AllocsUpdated[2]!, AllocatedResources: { Tasks: null, Shared: { Ports: [{ Label: 'x', Value: 8080 }] } } as never };
    assert.throws(() => fsm.apply(bad, 4));
    assert.equal(store.allocs().length, 1);
    assert.equal(store.allocsByNode(node.ID).length, 1);
    assert.equal(store.allocsByJob('default', 'web').length, 1);
    assert.deepEqual(store.nodeUsage.get(node.ID), usageBefore);
    assert.equal(store.latestIndex(), 3);
    assert.equal(store.tableIndex(Table.Allocs), 3);
    // An older snapshot still reads what it read before.
    assert.equal(older.allocsByNode(node.ID).length, 1);
    assert.equal(older.nodeAllocatedUsage(node.ID).cpu, usageBefore.totals.cpu);

    assert.throws(() => fsm.apply(poisonRegister('bad'), 4));
    assert.equal(store.jobById('default', 'bad'), undefined);
    assert.deepEqual(store.jobVersions('default', 'bad'), []);
    assert.equal(store.tableIndex(Table.Jobs), jobsIndex);
    // The store keeps working after a rollback.
    fsm.apply(placeCmd(job, node, 2), 4);
    assert.equal(store.allocsByNode(node.ID).length, 3);
    assert.equal(store.latestIndex(), 4);
  });
});

describe('Server write path', () => {
  it('rejects only the failing caller, keeps applying later entries and restarts', { timeout: 10_000 }, async () => {
    const s = await start();
    const dir = s.config.dataDir;
    await s.registerJob(mockJob({ ID: 'before' }));
    const failed = s.apply(poisonRegister('bad'));
    const after = s.registerJob(mockJob({ ID: 'after' }));
    await assert.rejects(failed, (e: unknown) => e instanceof ServerError && e.code === 'APPLY_FAILED');
    const r = await after;
    assert.equal(s.state.jobById('default', 'bad'), undefined);
    assert.ok(s.state.jobById('default', 'after'));
    assert.equal(s.state.latestIndex(), r.index);
    const jobsBefore = JSON.stringify(s.state.jobs('default'));
    await s.close();
    const again = await start({ dataDir: dir });
    assert.equal(again.state.latestIndex(), r.index);
    assert.equal(JSON.stringify(again.state.jobs('default')), jobsBefore);
    await again.registerJob(mockJob({ ID: 'later' }));
    assert.ok(again.state.jobById('default', 'later'));
  });

  it('refuses a malformed command before it reaches the log, naming the field', async () => {
    const s = await start();
    const index = s.state.latestIndex();
    await assert.rejects(
      s.apply({ Type: 'EvalUpdate', Evals: [null as never], Now: NOW }),
      (e: unknown) => e instanceof ServerError && e.code === 'COMMAND_INVALID' && e.message.includes('Evals[0].ID'),
    );
    await assert.rejects(s.apply({ Type: 'Nope' } as unknown as Command), (e: unknown) => e instanceof ServerError && e.code === 'COMMAND_INVALID');
    assert.equal(s.state.latestIndex(), index);
    await s.registerJob(mockJob({ ID: 'ok' }));
    assert.equal(s.state.latestIndex(), index + 1);
  });

  it('applies what was written to the log, not the caller object', async () => {
    const s = await start();
    const node = mockNode();
    await s.apply(nodeCmd(node));
    node.Attributes['mutated'] = 'after-apply';
    node.Name = 'changed';
    const stored = s.state.nodeById(node.ID)!;
    assert.equal(stored.Attributes['mutated'], undefined);
    assert.notEqual(stored.Name, 'changed');
  });
});

describe('undo log', () => {
  it('puts back repeated writes of one key and index changes in any order', () => {
    const store = new StateStore();
    const fsm = new Fsm(store);
    const node = mockNode();
    const other = mockNode();
    const job = mockJob({ ID: 'web' });
    fsm.apply(nodeCmd(node), 1);
    fsm.apply(nodeCmd(other), 2);
    fsm.apply(registerCmd(job), 3);
    fsm.apply(placeCmd(job, node, 2), 4);
    const [a, b] = store.allocsByJob('default', 'web');
    const before = { a: store.allocById(a!.ID), b: store.allocById(b!.ID), usage: structuredClone(store.nodeUsage.get(node.ID)), otherUsage: structuredClone(store.nodeUsage.get(other.ID)) };
    const nodeAllocsIndex = store.tableIndex(nodeAllocsTableKey(node.ID));
    const otherAllocsIndex = store.tableIndex(nodeAllocsTableKey(other.ID));
    const jobAllocsIndex = store.tableIndex(jobAllocsTableKey('default', 'web'));
    assert.throws(() =>
      store.transact(() => {
        // Move a to the other node and back, write b twice, delete a, then fail.
        store.putAlloc({ ...a!, NodeID: other.ID }, 5);
        store.putAlloc({ ...a!, NodeID: node.ID, Name: 'moved-back' }, 5);
        store.putAlloc({ ...b!, Name: 'first' }, 5);
        store.putAlloc({ ...b!, Name: 'second' }, 5);
        store.deleteAlloc(a!.ID, 5);
        throw new Error('boom');
      }),
    );
    assert.equal(store.allocById(a!.ID), before.a);
    assert.equal(store.allocById(b!.ID), before.b);
    assert.deepEqual(store.allocsByNode(node.ID).map((x) => x.ID).sort(), [a!.ID, b!.ID].sort());
    assert.deepEqual(store.allocsByNode(other.ID), []);
    assert.deepEqual(store.nodeUsage.get(node.ID), before.usage);
    assert.deepEqual(store.nodeUsage.get(other.ID), before.otherUsage);
    assert.equal(store.allocsByJob('default', 'web').length, 2);
    // The per-node and per-job pseudo-tables the failed apply moved (some more than once) are back.
    assert.equal(store.tableIndex(nodeAllocsTableKey(node.ID)), nodeAllocsIndex);
    assert.equal(store.tableIndex(nodeAllocsTableKey(other.ID)), otherAllocsIndex);
    assert.equal(store.tableIndex(jobAllocsTableKey('default', 'web')), jobAllocsIndex);
    // The next apply moves them again.
    fsm.apply(placeCmd(job, other, 1), 5);
    assert.equal(store.tableIndex(nodeAllocsTableKey(other.ID)), 5);
    assert.equal(store.tableIndex(nodeAllocsTableKey(node.ID)), nodeAllocsIndex);
  });
});
