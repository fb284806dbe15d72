/**
 * A new leader's grace (Nomad's failover_heartbeat_ttl): after a leadership change no live node is
 * marked down before it had the failover TTL to reach the new leader, however short its normal TTL
 * — with the embedded SQLite leadership (the server restarted on its data dir leads again) and
 * with the etcd leadership (the leader leaves; another server of the etcd cluster takes over).
 * Heartbeat timers run on a fake clock; the log and the elections are real.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, type ServerConfig } from '../../src/server/server.js';
import { openEtcdReplication } from '../../src/server/etcd/etcd-replication.js';
import { Table } from '../../src/server/state/state-reader.js';
import { FakeClock } from '../../src/time/clock.js';
import { mockNode } from '../mock/factories.js';
import { EtcdCluster } from '../helpers/etcd-process.js';

/** Short normal TTLs (1–2 s, no grace) and a failover TTL of a minute. */
const HEARTBEAT = { minTtlMs: 1_000, graceMs: 0, failoverTtlMs: 60_000 };

async function until(s: Server, cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await s.waitForChange(Object.values(Table), s.state.latestIndex(), 50);
  assert.ok(cond(), `timed out waiting for ${what}`);
}

/** Checks the grace on `leader` (just elected, on `clock`): ready through the failover TTL, down after it. */
async function checkGrace(leader: Server, clock: FakeClock, nodeId: string): Promise<void> {
  await until(leader, () => leader.duties !== null, 'the new leader started its duties');
  await clock.advanceAsync(30_000);
  await clock.advanceAsync(29_000);
  assert.equal(leader.state.nodeById(nodeId)?.Status, 'ready', 'a node was marked down within the failover TTL');
  await clock.advanceAsync(2_000);
  await until(leader, () => leader.state.nodeById(nodeId)?.Status === 'down', 'the silent node marked down after the failover TTL');
}

describe('a new leader gives every live node the failover TTL', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close().catch(() => undefined);
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('embedded SQLite leadership: a restarted server marks nothing down before the failover TTL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-grace-sqlite-'));
    dirs.push(dir);
    const first = await Server.open({ dataDir: dir, numWorkers: 0, heartbeat: HEARTBEAT });
    const node = mockNode();
    await first.registerNode(node);
    await first.close();
    const clock = new FakeClock();
    const again = await Server.open({ dataDir: dir, numWorkers: 0, clock, heartbeat: HEARTBEAT });
    servers.push(again);
    await checkGrace(again, clock, node.ID);
  });

  it('a failover TTL shorter than the longest heartbeat TTL: nothing is marked down before that TTL and its grace', async () => {
    // A TTL of up to 2 × 100 s plus 10 s of grace, against a failover TTL of 60 s.
    const heartbeat = { minTtlMs: 100_000, graceMs: 10_000, failoverTtlMs: 60_000 };
    const dir = mkdtempSync(join(tmpdir(), 'caravan-grace-long-ttl-'));
    dirs.push(dir);
    const first = await Server.open({ dataDir: dir, numWorkers: 0, heartbeat });
    const node = mockNode();
    await first.registerNode(node);
    await first.close();
    const clock = new FakeClock();
    const again = await Server.open({ dataDir: dir, numWorkers: 0, clock, heartbeat });
    servers.push(again);
    await until(again, () => again.duties !== null, 'the new leader started its duties');
    await clock.advanceAsync(100_000);
    await clock.advanceAsync(109_000);
    // A node marked down is a log write on real time (the server's clock is fake): give it 2 s to land.
    for (const until = Date.now() + 2_000; Date.now() < until && again.state.nodeById(node.ID)?.Status === 'ready'; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(again.state.nodeById(node.ID)?.Status, 'ready', 'a node was marked down before the longest TTL it could have been given');
    await clock.advanceAsync(2_000);
    await until(again, () => again.state.nodeById(node.ID)?.Status === 'down', 'the silent node marked down after the longest TTL and grace');
  });

  describe('etcd leadership', () => {
    let etcd: EtcdCluster;
    before(async () => {
      etcd = await EtcdCluster.start(1);
    });
    after(async () => {
      await etcd?.stop();
    });

    it('the leader leaves; the server taking over marks nothing down before the failover TTL', async () => {
      const prefix = `/grace-${randomBytes(4).toString('hex')}/`;
      const open = async (name: string, over: Partial<ServerConfig>): Promise<Server> => {
        const dir = mkdtempSync(join(tmpdir(), `caravan-grace-${name}-`));
        dirs.push(dir);
        const repl = openEtcdReplication({ endpoints: etcd.endpoints, prefix, leaseTtlSeconds: 1 }, { id: name, name, address: `127.0.0.1:${name === 'a' ? 14646 : 24646}` });
        const s = await Server.open({ dataDir: dir, numWorkers: 0, heartbeat: HEARTBEAT, logBackend: repl.log, leadership: repl.leadership, ...over });
        servers.push(s);
        return s;
      };
      const a = await open('a', {});
      await until(a, () => a.duties !== null, 'the first server leads');
      const clock = new FakeClock();
      const b = await open('b', { clock });
      const node = mockNode();
      await a.registerNode(node);
      await until(b, () => b.state.nodeById(node.ID) !== undefined, 'the follower applied the registration');
      assert.equal(b.duties, null, 'the second server follows');
      await a.close();
      await checkGrace(b, clock, node.ID);
    });
  });
});
