/**
 * EtcdLeadership against a real one-member etcd: one leader among several servers, members
 * with their addresses, the leader's address followed by everyone, leadership handed over when
 * the leader leaves (close revokes its lease) or its lease lapses, and onChange on both sides.
 * Leases are kept alive on a worker thread (WorkerLeaseKeeper), as a server's are: a leader
 * whose main thread is busy for several TTLs keeps leading.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { EtcdLeadership } from '../../src/server/leadership/etcd-leadership.js';
import { EtcdWatch } from '../../src/server/etcd/etcd-watch.js';
import { WorkerLeaseKeeper } from '../../src/server/etcd/worker-lease-keeper.js';
import type { LeaseKeeper } from '../../src/server/etcd/lease-keeper.js';
import { CaravanError } from '../../src/structs/caravan-error.js';

let etcd: EtcdCluster;
before(async () => {
  etcd = await EtcdCluster.start(1);
});
after(async () => {
  await etcd?.stop();
});

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Member {
  client: Etcd3;
  leadership: EtcdLeadership;
  changes: boolean[];
}

async function join(prefix: string, id: string, openWatch?: typeof EtcdWatch.open): Promise<Member> {
  const client = openEtcdClient({ endpoints: etcd.endpoints });
  const leaseKeeper = new WorkerLeaseKeeper({ config: { endpoints: etcd.endpoints }, ttlMs: 1000 });
  const leadership = new EtcdLeadership({ client, prefix, id, name: `name-${id}`, address: `127.0.0.1:${id}`, leaseTtlSeconds: 1, leaseKeeper, onClose: () => client.close(), ...(openWatch ? { openWatch } : {}) });
  const changes: boolean[] = [];
  leadership.onChange((l) => changes.push(l));
  await leadership.start();
  return { client, leadership, changes };
}

describe('etcd leadership', () => {
  it('elects one leader, lists the members, and hands over when the leader leaves', async () => {
    const prefix = `/lead-${randomBytes(4).toString('hex')}/`;
    const a = await join(prefix, '1001');
    await waitFor(() => a.leadership.isLeader(), 'a to lead');
    const b = await join(prefix, '1002');
    const c = await join(prefix, '1003');
    try {
      assert.deepEqual(a.changes, [true]);
      assert.equal(b.leadership.isLeader() || c.leadership.isLeader(), false);
      assert.equal(a.leadership.lastContactMs(), 0);
      for (const m of [a, b, c]) {
        assert.equal(m.leadership.leaderAddress(), '127.0.0.1:1001');
        assert.ok(m.leadership.fence() === null || m === a);
      }
      await waitFor(() => b.leadership.members().length === 3, 'b to see every member');
      assert.deepEqual(
        b.leadership.members().map((m) => [m.id, m.name, m.address, m.leader, m.status]),
        [
          ['1001', 'name-1001', '127.0.0.1:1001', true, 'alive'],
          ['1002', 'name-1002', '127.0.0.1:1002', false, 'alive'],
          ['1003', 'name-1003', '127.0.0.1:1003', false, 'alive'],
        ],
      );
      // The leader moves its address (the agent learns its port once it listens): everyone follows.
      a.leadership.advertise('127.0.0.1:2001');
      await waitFor(() => c.leadership.leaderAddress() === '127.0.0.1:2001', 'the new address');

      // The leader leaves: its lease is revoked, one of the others leads at once.
      await a.leadership.close();
      await waitFor(() => b.leadership.isLeader() || c.leadership.isLeader(), 'a new leader', 5000);
      const next = b.leadership.isLeader() ? b : c;
      const other = next === b ? c : b;
      assert.deepEqual(next.changes, [true]);
      assert.deepEqual(other.changes, []);
      await waitFor(() => other.leadership.leaderAddress() === next.leadership.leaderAddress(), 'the follower to follow');
      await waitFor(() => other.leadership.members().find((m) => m.id === '1001')?.status === 'failed', 'a to show as failed');
    } finally {
      await b.leadership.close();
      await c.leadership.close();
    }
  });

  it('a leader whose lease was lost steps down (onChange false) and campaigns again', async () => {
    const prefix = `/lead-${randomBytes(4).toString('hex')}/`;
    const a = await join(prefix, '1');
    try {
      await waitFor(() => a.leadership.isLeader(), 'a to lead');
      const fence = a.leadership.fence()!;
      // The lease disappears in etcd (as after a pause past its TTL).
      const kv = (await a.client.get(fence.key).exec()).kvs[0]!;
      await a.client.leaseClient.leaseRevoke({ ID: kv.lease });
      await waitFor(() => a.changes.length >= 2, 'a to step down');
      assert.deepEqual(a.changes.slice(0, 2), [true, false]);
      // Alone in the cluster, it is elected again with a new lease: a new fence.
      await waitFor(() => a.leadership.isLeader(), 'a to lead again', 10_000);
      assert.notEqual(a.leadership.fence()!.createRevision, fence.createRevision);
    } finally {
      await a.leadership.close();
    }
  });

  it('a leader whose main thread is busy for 3.5 TTLs keeps leading: no step-down, no other leader, the same fence', async () => {
    const prefix = `/lead-${randomBytes(4).toString('hex')}/`;
    const a = await join(prefix, '1');
    await waitFor(() => a.leadership.isLeader(), 'a to lead');
    const b = await join(prefix, '2');
    try {
      await waitFor(() => b.leadership.leaderAddress() === '127.0.0.1:1', 'b to follow a');
      const fence = a.leadership.fence()!;
      // The whole thread stalls (as under GC, a 10,000-node plan or a herd of requests): no
      // timer, no gRPC answer, no watch event runs on it for 3.5 × the 1 s TTL.
      const until = Date.now() + 3500;
      while (Date.now() < until) {
        // busy
      }
      assert.ok(a.leadership.isLeader(), 'a still leads the moment its thread runs again');
      // Two more TTLs for anything the stall set off (an expired lease's key deleted, b taking
      // over) to happen.
      await new Promise((r) => setTimeout(r, 2000));
      assert.deepEqual(a.changes, [true], 'a never stepped down');
      assert.deepEqual(b.changes, [], 'b never led');
      assert.deepEqual(a.leadership.fence(), fence);
      assert.equal(b.leadership.leaderAddress(), '127.0.0.1:1');
      // In etcd too: a's key (its lease) outlived the stall.
      assert.equal((await a.client.get(fence.key).exec()).kvs[0]?.create_revision, fence.createRevision);
    } finally {
      await a.leadership.close();
      await b.leadership.close();
    }
  });

  it('by default a server campaigns with a 1 s lease (a dead leader is replaced ~1 s after its death)', async () => {
    const prefix = `/lead-${randomBytes(4).toString('hex')}/`;
    const client = openEtcdClient({ endpoints: etcd.endpoints });
    const leadership = new EtcdLeadership({ client, prefix, id: '1', name: 'name-1', address: '127.0.0.1:1', onClose: () => client.close() });
    try {
      await leadership.start();
      await waitFor(() => leadership.isLeader(), 'it to lead');
      const leaseId = (await client.get(leadership.fence()!.key).exec()).kvs[0]!.lease;
      // (The test etcd's 500 ms election timeout allows 1 s; etcd's default 1 s one raises it to 2 s.)
      assert.equal(String((await client.leaseClient.leaseTimeToLive({ ID: leaseId, keys: false })).grantedTTL), '1');
    } finally {
      await leadership.close();
    }
  });

  it('a wall-clock step back does not lengthen a lease: a leader whose confirmations stop steps down', async () => {
    const prefix = `/lead-${randomBytes(4).toString('hex')}/`;
    const client = openEtcdClient({ endpoints: etcd.endpoints });
    // The lease stays alive in etcd (the worker keeps it), but the leadership stops seeing new
    // confirmations: the lease confirmation rule alone must end its leadership, on its clock.
    const inner = new WorkerLeaseKeeper({ config: { endpoints: etcd.endpoints }, ttlMs: 1000 });
    let frozen: Map<string, number> | null = null;
    const leaseKeeper: LeaseKeeper = {
      open: () => inner.open(),
      keep: (id, at, onLost) => inner.keep(id, at, onLost),
      confirmedAt: (id) => (frozen ? (frozen.get(id) ?? null) : inner.confirmedAt(id)),
      release: (id) => inner.release(id),
      close: () => inner.close(),
    };
    const leadership = new EtcdLeadership({ client, prefix, id: '1', name: 'name-1', address: '127.0.0.1:1', leaseTtlSeconds: 1, leaseKeeper, onClose: () => client.close() });
    const changes: boolean[] = [];
    leadership.onChange((l) => changes.push(l));
    const realNow = Date.now;
    try {
      await leadership.start();
      await waitFor(() => leadership.isLeader(), 'it to lead');
      const leaseId = (await client.get(leadership.fence()!.key).exec()).kvs[0]!.lease;
      frozen = new Map([[leaseId, inner.confirmedAt(leaseId)!]]);
      // The wall clock steps back an hour (NTP, a resumed VM): measured on it, the last
      // confirmation would look fresh for an hour.
      Date.now = () => realNow() - 3_600_000;
      await waitFor(() => changes.length >= 2, 'it to step down');
      assert.deepEqual(changes.slice(0, 2), [true, false]);
    } finally {
      Date.now = realNow;
      await leadership.close();
    }
  });

  it('with etcd down nobody leads or names a leader; once etcd is back a leader is elected', async () => {
    const prefix = `/lead-${randomBytes(4).toString('hex')}/`;
    const a = await join(prefix, '1');
    await waitFor(() => a.leadership.isLeader(), 'a to lead');
    const b = await join(prefix, '2');
    try {
      await waitFor(() => b.leadership.leaderAddress() === '127.0.0.1:1', 'b to follow a');
      await etcd.stopMember(0, true);
      // Within the lease TTL (1 s) of the last keep-alive nobody can vouch for a leader.
      await waitFor(() => [a, b].every((m) => !m.leadership.isLeader() && m.leadership.leaderAddress() === null && m.leadership.fence() === null), 'everyone leaderless', 5000);
      await etcd.startMember(0);
      await waitFor(() => [a, b].filter((m) => m.leadership.isLeader()).length === 1, 'one leader again', 10_000);
      const leader = a.leadership.isLeader() ? a : b;
      const other = leader === a ? b : a;
      await waitFor(() => other.leadership.leaderAddress() === leader.leadership.leaderAddress(), 'the other to follow it');
    } finally {
      await a.leadership.close();
      await b.leadership.close();
    }
  });

  it('a follower whose watch ends while it is still reading the cluster reads it again and follows the leader', async () => {
    const prefix = `/lead-${randomBytes(4).toString('hex')}/`;
    const a = await join(prefix, '1');
    await waitFor(() => a.leadership.isLeader(), 'a to lead');
    // b's first election watch ends (as when etcd goes away) before its read of the cluster is
    // done: that read is superseded, and b must read again rather than wait for it for good.
    let ended = 0;
    const openWatch: typeof EtcdWatch.open = async (client, o) => {
      const w = await EtcdWatch.open(client, o);
      if (ended === 0 && 'prefix' in o.range && o.range.prefix.endsWith('/election/')) {
        ended++;
        o.onEnd(new CaravanError('ETCD_WATCH_ENDED', { range: o.range.prefix, reason: 'ended by the test' }));
      }
      return w;
    };
    const b = await join(prefix, '2', openWatch);
    try {
      await waitFor(() => b.leadership.leaderAddress() === '127.0.0.1:1', 'b to follow a');
      assert.equal(ended, 1);
    } finally {
      await a.leadership.close();
      await b.leadership.close();
    }
  });
});
