/**
 * Several real Servers on one shared log (SQLite in memory, the embedded backend every test
 * uses) with a leadership the test switches: followers apply the leader's entries, refuse writes,
 * and leader duties move with leadership.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Server, type ServerConfig } from '../../../src/server/server.js';
import { Table } from '../../../src/server/state/state-reader.js';
import { SqliteLogBackend } from '../../../src/server/log/sqlite-log-backend.js';
import { FakeClock } from '../../../src/time/clock.js';
import type { StateStore } from '../../../src/server/state/state-store.js';
import { CaravanError } from '../../../src/structs/caravan-error.js';
import { mockJob, mockNode } from '../../mock/factories.js';
import { fakeSchedulerFactory } from '../fake-scheduler.js';
import { LeadershipSwitch, sharedLog } from './test-cluster.js';
import { settled } from '../settled-server.js';

const ADDR = { a: '127.0.0.1:14646', b: '127.0.0.1:24646' } as const;

/** Everything a server's state answers, in a comparable form. */
function digest(s: StateStore): unknown {
  const jobs = s.jobs('*');
  return JSON.parse(
    JSON.stringify({
      index: s.latestIndex(),
      jobs,
      versions: jobs.map((j) => s.jobVersions(j.Namespace, j.ID)),
      summaries: jobs.map((j) => s.jobSummary(j.Namespace, j.ID)),
      allocs: s.allocs(),
      evals: s.evals(),
      nodes: s.nodes(),
      deployments: s.deployments(),
    }),
  ) as unknown;
}

/** Waits on real state changes until cond() holds. */
async function until(s: Server, cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) {
    await s.waitForChange(Object.values(Table), s.state.latestIndex(), 50);
  }
  assert.ok(cond(), `timed out waiting for ${what}`);
}

function isCode(code: string, text?: string): (err: unknown) => boolean {
  return (err) => err instanceof CaravanError && err.code === code && (!text || err.message.includes(text));
}

describe('servers sharing one replicated log', () => {
  const servers: Server[] = [];
  const logs: SqliteLogBackend[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const l of logs.splice(0)) await l.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function cluster(): { sw: LeadershipSwitch; open(name: 'a' | 'b', over?: Partial<ServerConfig>): Promise<Server>; log: SqliteLogBackend } {
    const log = SqliteLogBackend.openInMemory();
    logs.push(log);
    const sw = new LeadershipSwitch();
    return {
      sw,
      log,
      async open(name, over = {}) {
        const dataDir = mkdtempSync(join(tmpdir(), 'caravan-replicated-'));
        dirs.push(dataDir);
        const s = await Server.open({
          dataDir,
          numWorkers: 1,
          schedulerFactory: () => fakeSchedulerFactory,
          gcIntervalMs: 0,
          heartbeat: { minTtlMs: 3_600_000 },
          logBackend: sharedLog(log),
          leadership: sw.member(name, ADDR[name]),
          ...over,
        });
        servers.push(s);
        return settled(s);
      },
    };
  }

  it('the follower applies every entry the leader commits: same state, same index, no duties', async () => {
    const c = cluster();
    c.sw.elect('a');
    const a = await c.open('a');
    await a.registerNode(mockNode());
    // A follower that joins late catches up from the log, then follows it live.
    const b = await c.open('b');
    assert.equal(b.state.latestIndex(), a.state.latestIndex());
    const reg = await a.registerJob(mockJob({ ID: 'web', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 3 }] }));
    await until(a, () => a.state.evalById(reg.evalId)?.Status === 'complete', 'the leader scheduled the job');
    await until(b, () => b.state.latestIndex() === a.state.latestIndex(), 'the follower caught up');
    assert.equal(b.state.allocsByJob('default', 'web').length, 3);
    assert.deepEqual(digest(b.store), digest(a.store));
    assert.equal(b.isLeader(), false);
    assert.equal(b.duties, null);
    assert.equal(b.leaderAddress(), ADDR.a);
    assert.deepEqual(b.peers().sort(), [ADDR.a, ADDR.b]);
  });

  it('refuses writes on a follower with NOT_LEADER naming the leader, and appends nothing', async () => {
    const c = cluster();
    c.sw.elect('a');
    const a = await c.open('a');
    const b = await c.open('b');
    const node = mockNode();
    await a.registerNode(node);
    await until(b, () => b.state.latestIndex() === a.state.latestIndex(), 'the follower caught up');
    const before = await c.log.lastIndex();
    await assert.rejects(b.registerJob(mockJob({ ID: 'refused' })), isCode('NOT_LEADER', ADDR.a));
    await assert.rejects(b.heartbeatNode(node.ID, 'ready', node.SecretID), isCode('NOT_LEADER', ADDR.a));
    await assert.rejects(b.updateNodeEligibility(node.ID, 'ineligible'), isCode('NOT_LEADER'));
    assert.equal(await c.log.lastIndex(), before);
    c.sw.elect(null);
    await assert.rejects(b.registerJob(mockJob({ ID: 'refused' })), isCode('NO_LEADER'));
    await assert.rejects(a.registerJob(mockJob({ ID: 'refused' })), isCode('NO_LEADER'));
    assert.equal(await c.log.lastIndex(), before);
    assert.equal(a.state.jobById('default', 'refused'), undefined);
  });

  it('moving leadership starts the duties on the new leader from the state and stops them on the old one', async () => {
    const c = cluster();
    c.sw.elect('a');
    // The first leader has no workers: the job's evaluation stays pending in its broker.
    const a = await c.open('a', { numWorkers: 0 });
    const b = await c.open('b');
    const node = mockNode();
    await a.registerNode(node);
    const reg = await a.registerJob(mockJob({ ID: 'moved', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 2 }] }));
    const old = a.duties!;
    assert.equal(old.heartbeats.tracking(node.ID), true);
    assert.equal(old.broker.stats().ready, 1);
    await until(b, () => b.state.evalById(reg.evalId)?.Status === 'pending', 'the follower has the pending eval');
    assert.equal(b.duties, null);

    c.sw.elect('b');
    await until(b, () => b.state.evalById(reg.evalId)?.Status === 'complete', 'the new leader scheduled the pending eval');
    assert.equal(b.state.allocsByJob('default', 'moved').length, 2);
    assert.equal(b.duties!.heartbeats.tracking(node.ID), true, 'the new leader gave the live node a heartbeat TTL');
    await until(a, () => a.state.latestIndex() === b.state.latestIndex(), 'the old leader follows');
    assert.deepEqual(digest(a.store), digest(b.store));
    assert.equal(a.duties, null);
    assert.equal(old.isStopped(), true);
    assert.equal(old.heartbeats.size(), 0);
    assert.equal(old.broker.isEnabled(), false);
    await assert.rejects(a.registerJob(mockJob({ ID: 'late' })), isCode('NOT_LEADER', ADDR.b));
    // The new leader's own writes go through.
    await b.updateNodeEligibility(node.ID, 'ineligible');
    await until(a, () => a.state.nodeById(node.ID)?.SchedulingEligibility === 'ineligible', 'the old leader applied the new leader\'s write');
  });

  it('a new leader gives every live node the failover heartbeat TTL before marking it down', async () => {
    const clock = new FakeClock();
    const c = cluster();
    c.sw.elect('a');
    const over: Partial<ServerConfig> = { clock, heartbeat: { minTtlMs: 1_000, graceMs: 0, failoverTtlMs: 60_000 } };
    const a = await c.open('a', over);
    const b = await c.open('b', over);
    const node = mockNode();
    await a.registerNode(node);
    c.sw.elect('b');
    for (let i = 0; i < 1000 && !b.duties; i++) await new Promise((r) => setImmediate(r));
    assert.ok(b.duties, 'the new leader started its duties');
    // Far past the node's normal TTL (1-2 s), but within the failover TTL: nothing is marked down.
    await clock.advanceAsync(59_000);
    assert.equal(b.state.nodeById(node.ID)?.Status, 'ready');
    await clock.advanceAsync(2_000);
    await until(b, () => b.state.nodeById(node.ID)?.Status === 'down', 'the silent node marked down after the failover TTL');
  });

  it('a server that lost leadership keeps no timer or worker running: its process can exit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-demoted-'));
    dirs.push(dir);
    const child = spawn(process.execPath, [fileURLToPath(new URL('./demoted-server-child.js', import.meta.url)), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | string>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('still running after 30 s');
      }, 30_000);
      child.on('exit', (c, sig) => {
        clearTimeout(t);
        resolve(c ?? String(sig));
      });
    });
    assert.equal(code, 0, `the demoted server's process exits by itself (output: ${out})`);
    const report = JSON.parse(out) as { armed: { heartbeats: number; periodic: number }; leader: boolean; heartbeats: number; broker: boolean };
    assert.deepEqual(report, { armed: { heartbeats: 1, periodic: 1 }, leader: false, heartbeats: 0, broker: false });
  });
});
