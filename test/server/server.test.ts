import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, type ServerConfig } from '../../src/server/server.js';
import { ServerError } from '../../src/server/server-error.js';
import { Table } from '../../src/server/state/state-reader.js';
import { FakeClock } from '../../src/time/clock.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { fakeSchedulerFactory } from './fake-scheduler.js';
import { settled } from './settled-server.js';

const dirs: string[] = [];

/** A service job whose group runs `count` allocations (the mock node fits 7). */
function smallJob(id: string, count: number) {
  return mockJob({ ID: id, TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: count }] });
}
const open: Server[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'caravan-server-'));
  dirs.push(d);
  return d;
}

async function start(over: Partial<ServerConfig> = {}): Promise<Server> {
  const s = await Server.open({
    dataDir: over.dataDir ?? tempDir(),
    numWorkers: 1,
    schedulerFactory: () => fakeSchedulerFactory,
    ...over,
  });
  open.push(s);
  return settled(s);
}

/** Waits (on real state changes) until cond() holds. */
async function until(s: Server, cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) {
    await s.waitForChange([Table.Evals, Table.Allocs, Table.Nodes, Table.Jobs], s.state.latestIndex(), 50);
  }
  assert.ok(cond(), `timed out waiting for ${what}`);
}

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('Server', () => {
  it('registers a job, schedules it and completes the eval', async () => {
    const s = await start();
    await s.registerNode(mockNode());
    const r = await s.registerJob(smallJob('web', 5));
    assert.ok(r.evalId);
    assert.equal(r.evalCreateIndex, r.index);
    await until(s, () => s.state.evalById(r.evalId)?.Status === 'complete', 'eval complete');
    assert.equal(s.state.allocsByJob('default', 'web').length, 5);
    assert.equal(s.state.jobById('default', 'web')?.Status, 'running');
    assert.equal(s.state.jobSummary('default', 'web')?.Summary.web?.Starting, 5);
  });

  it('rejects invalid jobs with 400 and EnforceIndex conflicts with 409', async () => {
    const s = await start();
    await assert.rejects(s.registerJob(mockJob({ ID: '' })), (e: unknown) => e instanceof ServerError && e.code === 'JOB_INVALID' && e.status === 400);
    const r = await s.registerJob(mockJob({ ID: 'web' }));
    await assert.rejects(
      s.registerJob(mockJob({ ID: 'web' }), { enforceIndex: true, jobModifyIndex: 0 }),
      (e: unknown) => e instanceof ServerError && e.code === 'JOB_EXISTS' && e.status === 409,
    );
    const ok = await s.registerJob(mockJob({ ID: 'web', Meta: { v: '2' } }), { enforceIndex: true, jobModifyIndex: r.jobModifyIndex });
    assert.equal(s.state.jobById('default', 'web')?.Version, 1);
    assert.equal(ok.jobModifyIndex, ok.index);
  });

  it('keeps acknowledged writes and finishes pending evals after a crash', async () => {
    const dir = tempDir();
    // No workers: evals stay pending, as if the server died before scheduling them.
    const first = await start({ dataDir: dir, numWorkers: 0 });
    await first.registerNode(mockNode());
    const regs: Awaited<ReturnType<Server['registerJob']>>[] = [];
    for (let i = 0; i < 5; i++) regs.push(await first.registerJob(smallJob(`job-${i}`, 1)));
    assert.equal(first.state.evals().filter((e) => e.Status === 'pending').length, 5);
    // Simulated crash: the first server is not closed before the second opens the same log.
    const second = await start({ dataDir: dir });
    assert.equal(second.state.jobs('default').length, 5);
    await until(second, () => regs.every((r) => second.state.evalById(r.evalId)?.Status === 'complete'), 'pending evals complete');
    assert.equal(second.state.allocs().length, 5);
  });

  it('restores from a snapshot plus the log tail', async () => {
    const dir = tempDir();
    const first = await start({ dataDir: dir, numWorkers: 0, snapshotThreshold: 4 });
    for (let i = 0; i < 10; i++) await first.registerJob(mockJob({ ID: `job-${i}` }));
    await first.snapshotNow();
    await first.registerJob(mockJob({ ID: 'after-snapshot' }));
    const index = first.state.latestIndex();
    await first.close();
    const second = await start({ dataDir: dir, numWorkers: 0 });
    assert.equal(second.state.latestIndex(), index);
    assert.equal(second.state.jobs('default').length, 11);
    assert.equal(second.state.evals().length, 11);
  });

  it('marks a node down when it misses its heartbeat and replaces its allocations', async () => {
    const clock = new FakeClock();
    const s = await start({ clock, heartbeat: { minTtlMs: 10_000, graceMs: 5_000 }, random: () => 0 });
    const a = mockNode();
    const b = mockNode();
    await s.registerNode(a);
    const r = await s.registerJob(mockJob({ ID: 'web', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 2 }] }));
    await until(s, () => s.state.evalById(r.evalId)?.Status === 'complete', 'placement');
    assert.equal(s.state.allocsByNode(a.ID).length, 2);
    await s.registerNode(b);
    await clock.advanceAsync(9_000);
    await s.heartbeatNode(b.ID, 'ready', b.SecretID);
    await clock.advanceAsync(7_000);
    await until(s, () => s.state.nodeById(a.ID)?.Status === 'down', 'node down');
    assert.equal(s.state.nodeById(b.ID)?.Status, 'ready');
    await until(
      s,
      () => s.state.allocsByNode(b.ID).length === 2 && s.state.allocsByNode(a.ID).every((x) => x.ClientStatus === 'lost'),
      'allocs lost and replaced',
    );
    assert.ok(s.state.evals().some((e) => e.TriggeredBy === 'node-update' && e.NodeID === a.ID));
  });

  it('creates an alloc-failure eval for failed allocations and unblocks on freed capacity', async () => {
    const s = await start();
    const n = mockNode();
    await s.registerNode(n);
    const r = await s.registerJob(mockJob({ ID: 'web', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 1 }] }));
    await until(s, () => s.state.evalById(r.evalId)?.Status === 'complete', 'placement');
    const [alloc] = s.state.allocsByJob('default', 'web');
    await s.updateAllocsFromClient([{ ID: alloc!.ID, NodeID: n.ID, ClientStatus: 'failed', ClientDescription: 'boom', TaskStates: {} }], n.SecretID);
    assert.ok(s.state.evalsByJob('default', 'web').some((e) => e.TriggeredBy === 'alloc-failure'));
    await until(s, () => s.state.allocsByJob('default', 'web').length === 2, 'replacement');
  });

  it('client calls are authenticated by the node SecretID on every transport (403 "Permission denied")', async () => {
    const s = await start();
    const n = mockNode();
    await assert.rejects(
      s.registerNode({ ...n, SecretID: '' }),
      (e: unknown) => e instanceof ServerError && e.code === 'CLIENT_REPORT_INVALID' && e.status === 400 && /Node\.SecretID/.test(e.message),
    );
    await s.registerNode(n);
    const denied = (e: unknown) => e instanceof ServerError && e.code === 'NODE_SECRET_MISMATCH' && e.status === 403 && e.message === 'Permission denied';
    await assert.rejects(s.registerNode({ ...n, SecretID: 'another' }), denied);
    await assert.rejects(s.heartbeatNode(n.ID, 'down', ''), denied);
    await assert.rejects(s.heartbeatNode(n.ID, 'down', 'not-the-secret'), denied);
    assert.equal(s.state.nodeById(n.ID)!.Status, 'ready', 'an unauthenticated heartbeat marks nothing down');
    const r = await s.registerJob(mockJob({ ID: 'web', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 1 }] }));
    await until(s, () => s.state.evalById(r.evalId)?.Status === 'complete', 'placement');
    const [alloc] = s.state.allocsByJob('default', 'web');
    const update = [{ ID: alloc!.ID, NodeID: n.ID, ClientStatus: 'failed', ClientDescription: 'forged', TaskStates: {} }];
    await assert.rejects(s.updateAllocsFromClient(update, 'not-the-secret'), denied);
    assert.notEqual(s.state.allocById(alloc!.ID)!.ClientStatus, 'failed');
    await s.heartbeatNode(n.ID, 'ready', n.SecretID);
    await s.updateAllocsFromClient(update, n.SecretID);
    assert.equal(s.state.allocById(alloc!.ID)!.ClientStatus, 'failed');
  });

  it('client reports are shape-checked by the server, naming the field', async () => {
    const s = await start();
    const bad = (re: RegExp) => (e: unknown) => e instanceof ServerError && e.code === 'CLIENT_REPORT_INVALID' && e.status === 400 && re.test(e.message);
    await assert.rejects(s.registerNode({ ...mockNode(), NodeResources: null }), bad(/Node\.NodeResources must be a JSON object/));
    await assert.rejects(s.updateAllocsFromClient([{ ID: 'a', ClientStatus: 'weird' }], ''), bad(/Allocs\[0\]\.ClientStatus "weird"/));
    await assert.rejects(s.updateAllocsFromClient({}, ''), bad(/Allocs must be a list/));
    await assert.rejects(
      s.heartbeatNode('x', 'sleepy', ''),
      (e: unknown) => e instanceof ServerError && e.code === 'NODE_STATUS_INVALID' && e.status === 400,
    );
  });

  it('stopAlloc sets the migrate transition and creates an alloc-stop eval', async () => {
    const s = await start();
    await s.registerNode(mockNode());
    await assert.rejects(s.stopAlloc('nope'), (e: unknown) => e instanceof ServerError && e.code === 'ALLOC_NOT_FOUND' && e.status === 404);
    const r = await s.registerJob(smallJob('web', 1));
    await until(s, () => s.state.evalById(r.evalId)?.Status === 'complete', 'placement');
    const [alloc] = s.state.allocsByJob('default', 'web');
    const stop = await s.stopAlloc(alloc!.ID);
    assert.equal(s.state.allocById(alloc!.ID)?.DesiredTransition.Migrate, true);
    assert.equal(s.state.evalById(stop.evalId)?.TriggeredBy, 'alloc-stop');
  });

  it('blocks evals that cannot place and unblocks them when a node registers', async () => {
    const s = await start();
    const r = await s.registerJob(mockJob({ ID: 'web', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 1 }] }));
    await until(s, () => s.state.evalById(r.evalId)?.Status === 'complete', 'first eval');
    assert.equal(s.duties!.blocked.size(), 1);
    await s.registerNode(mockNode());
    await until(s, () => s.state.allocsByJob('default', 'web').length === 1, 'placement after unblock');
  });

  it('publishes events for applied commands', async () => {
    const s = await start({ numWorkers: 0 });
    const ac = new AbortController();
    const iter = s.events.subscribe({ index: 0, signal: ac.signal })[Symbol.asyncIterator]();
    await s.registerJob(mockJob({ ID: 'web' }));
    const batch = await iter.next();
    assert.deepEqual(batch.value?.Events.map((e: { Type: string }) => e.Type), ['JobRegistered', 'EvaluationUpdated']);
    ac.abort();
  });

  it('collects old terminal evals and allocs of stopped jobs', async () => {
    const clock = new FakeClock();
    const s = await start({ clock, gcIntervalMs: 0, gcThresholdMs: 60_000, heartbeat: { minTtlMs: 600_000 } });
    await s.registerNode(mockNode());
    const r = await s.registerJob(smallJob('web', 1));
    await until(s, () => s.state.evalById(r.evalId)?.Status === 'complete', 'placement');
    const d = await s.deregisterJob('default', 'web');
    await until(s, () => s.state.evalById(d.evalId)?.Status === 'complete', 'stop');
    assert.equal(await s.collectGarbage(), 0);
    await clock.advanceAsync(61_000);
    assert.equal(await s.collectGarbage(), 2);
    assert.deepEqual(s.state.evalsByJob('default', 'web').map((e) => [e.TriggeredBy, e.Status]), []);
    assert.equal(s.state.allocsByJob('default', 'web').length, 0);
  });
});
