/**
 * The etcd log backend against a real etcd (one member, and three for the member-loss case):
 * the conformance suite, fencing of a deposed leader, large entries split into parts, snapshot
 * chunks with a fresh follower catching up from snapshot + tail, and etcd going away and back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { EtcdLeadership } from '../../src/server/leadership/etcd-leadership.js';
import { EtcdLogBackend } from '../../src/server/log/etcd-log-backend.js';
import type { EtcdFence } from '../../src/server/log/etcd-log-keys.js';
import { LogError, type LogEntry } from '../../src/server/log/log-backend.js';
import { runLogConformance } from './log-conformance.js';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import { writeSnapshot } from '../../src/server/snapshot/snapshot-writer.js';
import { loadLatestSnapshot } from '../../src/server/snapshot/snapshot-decoder.js';
import { mockJob } from '../mock/factories.js';
import { registerCmd } from './fsm-helpers.js';

let etcd: EtcdCluster;
before(async () => {
  etcd = await EtcdCluster.start(1);
});
after(async () => {
  await etcd?.stop();
});

/** A server's view of one cluster prefix: its client, leadership and log. */
interface Node {
  client: Etcd3;
  leadership: EtcdLeadership;
  log: EtcdLogBackend;
  close(): Promise<void>;
}

async function openNode(endpoints: string[], prefix: string, id: string, fence?: () => EtcdFence | null): Promise<Node> {
  const client = openEtcdClient({ endpoints });
  const leadership = new EtcdLeadership({ client, prefix, id, name: id, address: `127.0.0.1:${id}`, leaseTtlSeconds: 2 });
  await leadership.start();
  const log = new EtcdLogBackend({ client, prefix, fence: fence ?? (() => leadership.fence()) });
  return {
    client,
    leadership,
    log,
    async close() {
      await log.close();
      await leadership.close();
      client.close();
    },
  };
}

function newPrefix(): string {
  return `/caravan-test-${randomBytes(4).toString('hex')}/`;
}

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function isLogError(code: string): (e: unknown) => boolean {
  return (e) => e instanceof LogError && e.code === code;
}

async function countKeys(client: Etcd3, prefix: string): Promise<number> {
  return client.getAll().prefix(prefix).count();
}

runLogConformance({
  name: 'etcd',
  async open() {
    const prefix = newPrefix();
    const node = await openNode(etcd.endpoints, prefix, 's1');
    await waitFor(() => node.leadership.isLeader(), 'leadership');
    return {
      backend: node.log,
      // The same server opening its log again (its leadership holds on).
      reopen: async () => new EtcdLogBackend({ client: node.client, prefix, fence: () => node.leadership.fence() }),
      cleanup: async () => {
        await node.client.delete().prefix(prefix);
        await node.close();
      },
    };
  },
});

describe('etcd log backend', () => {
  it('a deposed leader appends nothing: its fence no longer matches the leader key (LOG_FENCED)', async () => {
    const prefix = newPrefix();
    const a = await openNode(etcd.endpoints, prefix, 'a');
    await waitFor(() => a.leadership.isLeader(), 'a to lead');
    const b = await openNode(etcd.endpoints, prefix, 'b');
    // A backend that keeps a's old fence, as a paused leader would before it notices anything.
    const staleFence = a.leadership.fence()!;
    const stale = new EtcdLogBackend({ client: a.client, prefix, fence: () => staleFence });
    try {
      assert.deepEqual(await a.log.append([{ type: 't', payload: 'by a' }]), [1]);
      assert.equal(b.leadership.isLeader(), false);
      await assert.rejects(b.log.append([{ type: 't', payload: 'by b' }]), isLogError('LOG_FENCED'));
      // Leadership moves: a's lease is revoked (it lapsed), b is elected.
      await a.client.leaseClient.leaseRevoke({ ID: await leaseOf(a.client, prefix) });
      await waitFor(() => b.leadership.isLeader(), 'b to lead');
      const keysBefore = await countKeys(a.client, `${prefix}log/`);
      await assert.rejects(stale.append([{ type: 't', payload: 'late' }]), isLogError('LOG_FENCED'));
      await assert.rejects(stale.append([{ type: 't', payload: 'x'.repeat(3 * 1024 * 1024) }]), isLogError('LOG_FENCED'));
      assert.equal(await countKeys(a.client, `${prefix}log/`), keysBefore, 'the deposed leader wrote no key, not even parts');
      assert.equal(a.leadership.isLeader(), false, 'a noticed it lost leadership');
      assert.deepEqual(await b.log.append([{ type: 't', payload: 'by b' }]), [2]);
      assert.deepEqual((await b.log.read(1)).map((e) => e.payload), ['by a', 'by b']);
    } finally {
      await stale.close();
      await a.close();
      await b.close();
      await clear(prefix);
    }
  });

  it('a leader elected again continues after what other leaders wrote and compacted meanwhile', async () => {
    const prefix = newPrefix();
    const a = await openNode(etcd.endpoints, prefix, 'a');
    await waitFor(() => a.leadership.isLeader(), 'a to lead');
    const b = await openNode(etcd.endpoints, prefix, 'b');
    try {
      assert.deepEqual(await a.log.append([{ type: 't', payload: 'a1' }, { type: 't', payload: 'a2' }]), [1, 2]);
      await a.client.leaseClient.leaseRevoke({ ID: await leaseOf(a.client, prefix) });
      await waitFor(() => b.leadership.isLeader(), 'b to lead');
      assert.deepEqual(await b.log.append([{ type: 't', payload: 'b3' }, { type: 't', payload: 'b4' }]), [3, 4]);
      await b.log.compact(4);
      await b.leadership.close();
      await waitFor(() => a.leadership.isLeader(), 'a to lead again');
      // a's own idea of the end (3) was written and compacted away by b: it must not reuse it.
      assert.deepEqual(await a.log.append([{ type: 't', payload: 'a5' }]), [5]);
      assert.deepEqual((await a.log.read(1)).map((e) => [e.index, e.payload]), [[5, 'a5']]);
    } finally {
      await a.close();
      await b.close();
      await clear(prefix);
    }
  });

  it('splits an entry larger than etcd’s request limit into parts and reassembles it, also for a follower', async () => {
    const prefix = newPrefix();
    const leader = await openNode(etcd.endpoints, prefix, 'l');
    await waitFor(() => leader.leadership.isLeader(), 'leadership');
    const follower = await openNode(etcd.endpoints, prefix, 'f');
    const seen: LogEntry[] = [];
    const stop = follower.log.subscribe(1, { onEntries: (es) => seen.push(...es), onError: (e) => assert.fail(e) });
    try {
      const big = JSON.stringify({ allocs: Array.from({ length: 60_000 }, (_, i) => ({ id: `alloc-${i}`, node: `node-${i % 97}` })) });
      assert.ok(Buffer.byteLength(big) > 1.5 * 1024 * 1024);
      const results = await Promise.all([
        leader.log.append([{ type: 'small', payload: 'before' }]),
        leader.log.append([{ type: 'plan', payload: big }]),
        leader.log.append([{ type: 'small', payload: 'after' }]),
      ]);
      assert.deepEqual(results, [[1], [2], [3]]);
      assert.ok((await countKeys(leader.client, `${prefix}log/p/`)) >= 2, 'the large entry is stored as parts');
      const back = await follower.log.read(1);
      assert.deepEqual(back.map((e) => [e.index, e.type]), [[1, 'small'], [2, 'plan'], [3, 'small']]);
      assert.equal(back[1]!.payload, big);
      await waitFor(() => seen.length >= 3, 'the follower’s subscription');
      assert.equal(seen[1]!.payload, big);
    } finally {
      stop();
      await follower.close();
      await leader.close();
      await clear(prefix);
    }
  });

  it('a fresh server catches up from the chunked snapshot and the tail, then follows new entries', async () => {
    const prefix = newPrefix();
    const leader = await openNode(etcd.endpoints, prefix, 'l');
    await waitFor(() => leader.leadership.isLeader(), 'leadership');
    let fresh: Node | null = null;
    try {
      for (let i = 1; i <= 10; i++) await leader.log.append([{ type: 't', payload: String(i) }]);
      const sink = await leader.log.beginSnapshot(6);
      const bigChunk = Buffer.alloc(3 * 1024 * 1024, 0x62);
      await sink.write(Buffer.from('state-'));
      await sink.write(bigChunk);
      await sink.write(Buffer.from('-6'));
      await sink.commit();
      await leader.log.compact(6);

      fresh = await openNode(etcd.endpoints, prefix, 'new');
      assert.equal(fresh.leadership.isLeader(), false);
      assert.equal(fresh.leadership.leaderAddress(), '127.0.0.1:l');
      const err = await new Promise<unknown>((resolve) => fresh!.log.subscribe(1, { onEntries: () => undefined, onError: resolve }));
      assert.ok(isLogError('LOG_COMPACTED')(err), 'entries before the snapshot are gone');
      const src = await fresh.log.openLatestSnapshot();
      assert.equal(src?.index, 6);
      const chunks: Buffer[] = [];
      for await (const c of src!.chunks()) chunks.push(c);
      assert.deepEqual(chunks.map((c) => c.length), [6, bigChunk.length, 2]);
      assert.ok(chunks[1]!.equals(bigChunk));
      const seen: string[] = [];
      const stop = fresh.log.subscribe(src!.index + 1, { onEntries: (es) => seen.push(...es.map((e) => e.payload)), onError: (e) => assert.fail(e) });
      await waitFor(() => seen.length >= 4, 'the tail');
      await leader.log.append([{ type: 't', payload: '11' }]);
      await waitFor(() => seen.length >= 5, 'a new entry');
      assert.deepEqual(seen, ['7', '8', '9', '10', '11']);
      stop();
      await assert.rejects(fresh.log.beginSnapshot(11), isLogError('LOG_FENCED'), 'a follower writes no snapshot');
      await assert.rejects(fresh.log.compact(11), isLogError('LOG_FENCED'), 'nor compacts');
    } finally {
      await fresh?.close();
      await leader.close();
      await clear(prefix);
    }
  });

  it('keeps only the latest complete snapshot and compacts etcd’s history behind it, also after interrupted ones', async () => {
    const prefix = newPrefix();
    const leader = await openNode(etcd.endpoints, prefix, 'l');
    await waitFor(() => leader.leadership.isLeader(), 'leadership');
    const snapIds = async (): Promise<string[]> => {
      const keys = await leader.client.getAll().prefix(`${prefix}snap/c/`).keys();
      return [...new Set(keys.map((k) => k.slice(`${prefix}snap/c/`.length).split('/')[0]!))];
    };
    const snapshot = async (index: number, data: string): Promise<void> => {
      const sink = await leader.log.beginSnapshot(index);
      await sink.write(Buffer.from(data));
      await sink.commit();
      await leader.log.compact(index);
    };
    /** A snapshot whose writer died part way: pieces written, never committed nor aborted. */
    const interrupted = async (index: number): Promise<void> => {
      const sink = await leader.log.beginSnapshot(index);
      await sink.write(randomBytes(3 * 1024 * 1024));
    };
    try {
      for (let i = 1; i <= 20; i++) await leader.log.append([{ type: 't', payload: String(i) }]);
      await snapshot(3, 'state-3');
      const oldRevision = (await leader.client.get(`${prefix}snap/latest`).exec()).header.revision;
      await interrupted(5);
      assert.equal((await snapIds()).length, 2, 'the latest and the partial one');
      await snapshot(7, 'state-7');
      await interrupted(9);
      await interrupted(11);
      await snapshot(13, 'state-13');
      await interrupted(15);
      assert.equal((await snapIds()).length, 2);
      await snapshot(17, 'state-17'.repeat(100_000));

      const ids = await snapIds();
      assert.equal(ids.length, 1, `one snapshot set left, got ${ids.join(', ')}`);
      assert.match(ids[0]!, /^0+17-/);
      const latest = await leader.log.loadLatestSnapshot();
      assert.equal(latest?.index, 17);
      assert.equal(latest?.data.toString(), 'state-17'.repeat(100_000));
      assert.deepEqual((await leader.log.read(1)).map((e) => e.payload), ['18', '19', '20']);
      // History before the latest snapshot is gone from etcd, not only its keys.
      await assert.rejects(leader.client.get(`${prefix}snap/latest`).revision(oldRevision).exec(), /compacted/);
      // Compressed: 800 KB of repetitive state takes a few KB.
      const stored = await leader.client.getAll().prefix(`${prefix}snap/c/`).buffers();
      assert.ok(Object.values(stored).reduce((n, b) => n + b.length, 0) < 50_000);

      const status = await leader.log.storageStatus();
      assert.equal(status.prefix, prefix);
      assert.ok(status.dbSizeBytes > 0);
      assert.ok(status.dbSizeInUseBytes! > 0 && status.dbSizeInUseBytes! <= status.dbSizeBytes);
      assert.equal(status.keys, await countKeys(leader.client, prefix));
    } finally {
      await leader.close();
      await clear(prefix);
    }
  });

  it('a snapshot superseded and compacted away while it is read fails with LOG_COMPACTED; loading reads the new latest', async () => {
    const prefix = newPrefix();
    const leader = await openNode(etcd.endpoints, prefix, 'l');
    await waitFor(() => leader.leadership.isLeader(), 'leadership');
    const follower = await openNode(etcd.endpoints, prefix, 'f');
    try {
      const state = new StateStore();
      const fsm = new Fsm(state);
      for (let i = 1; i <= 30; i++) {
        const job = mockJob({ ID: `job-${i}` });
        fsm.apply(registerCmd(job), i);
        await leader.log.append([{ type: 't', payload: String(i) }]);
      }
      // One row per chunk: more pieces than one read fetches, so the read goes back to etcd.
      await writeSnapshot(leader.log, state, { rowsPerChunk: 1 });
      await leader.log.compact(30);
      const src = await follower.log.openLatestSnapshot();
      const it = src!.chunks()[Symbol.asyncIterator]();
      await it.next();
      // A newer snapshot commits and compacts while the follower is part way through.
      fsm.apply(registerCmd(mockJob({ ID: 'job-31' })), 31);
      await leader.log.append([{ type: 't', payload: '31' }]);
      await writeSnapshot(leader.log, state, { rowsPerChunk: 1 });
      await leader.log.compact(31);
      await assert.rejects(
        (async () => {
          for (;;) if ((await it.next()).done) break;
        })(),
        isLogError('LOG_COMPACTED'),
      );
      // Loading starts again on the new latest. (A read superseded on each try gives up after a few.)
      let opened = 0;
      const superseding: typeof follower.log = Object.create(follower.log) as typeof follower.log;
      superseding.openLatestSnapshot = async () => {
        if (opened++ === 0) {
          const first = await follower.log.openLatestSnapshot();
          await writeSnapshot(leader.log, state, { rowsPerChunk: 1 });
          await leader.log.compact(31);
          return first;
        }
        return follower.log.openLatestSnapshot();
      };
      const loaded = await loadLatestSnapshot(superseding);
      assert.equal(opened, 2);
      assert.equal(loaded?.index, 31);
      assert.ok(loaded?.state.jobs.some((j) => j.ID === 'job-31'));
    } finally {
      await follower.close();
      await leader.close();
      await clear(prefix);
    }
  });

  it('etcd stopped: appends fail with LOG_IO and write nothing; etcd back: the log works and followers resume', async () => {
    const own = await EtcdCluster.start(1);
    const prefix = newPrefix();
    const leader = await openNode(own.endpoints, prefix, 'l');
    const follower = await openNode(own.endpoints, prefix, 'f');
    const seen: number[] = [];
    const stop = follower.log.subscribe(1, { onEntries: (es) => seen.push(...es.map((e) => e.index)), onError: (e) => assert.fail(e) });
    try {
      await waitFor(() => leader.leadership.isLeader(), 'leadership');
      assert.deepEqual(await leader.log.append([{ type: 't', payload: '1' }]), [1]);
      await own.stopMember(0);
      const started = Date.now();
      const err = await leader.log.append([{ type: 't', payload: 'lost' }]).then(
        () => assert.fail('append succeeded with etcd down'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof LogError && (err.code === 'LOG_IO' || err.code === 'LOG_FENCED'), `clear log error, got ${String(err)}`);
      assert.ok(Date.now() - started < 15_000, 'the failure comes within seconds');
      await own.startMember(0);
      await waitFor(() => leader.leadership.isLeader() || follower.leadership.isLeader(), 'a leader again', 20_000);
      const now = leader.leadership.isLeader() ? leader : follower;
      const other = now === leader ? follower : leader;
      // The first calls after the restart may still meet a reconnecting client: the write goes
      // through within seconds, and only once.
      const idx = await eventually(async () => (await now.log.append([{ type: 't', payload: '2' }]))[0]!);
      assert.equal(idx, 2, 'the failed append left nothing behind');
      assert.deepEqual((await other.log.read(1)).map((e) => e.payload), ['1', '2']);
      await waitFor(() => seen.length >= 2, 'the follower to resume', 20_000);
      assert.deepEqual(seen, [1, 2]);
    } finally {
      stop();
      await follower.close();
      await leader.close();
      await own.stop();
    }
  });

  it('goes on when one etcd member of three is killed', async () => {
    const three = await EtcdCluster.start(3);
    const prefix = newPrefix();
    const node = await openNode(three.endpoints, prefix, 's');
    try {
      await waitFor(() => node.leadership.isLeader(), 'leadership');
      assert.deepEqual(await node.log.append([{ type: 't', payload: '1' }]), [1]);
      await three.stopMember(0, true);
      assert.deepEqual(await node.log.append([{ type: 't', payload: '2' }]), [2]);
      assert.deepEqual((await node.log.read(1)).map((e) => e.payload), ['1', '2']);
      assert.ok(node.leadership.isLeader());
    } finally {
      await node.close();
      await three.stop();
    }
  });
});

/** Retries `fn` until it succeeds (10 s at most). */
async function eventually<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The lease ID on the prefix's leader key. */
async function leaseOf(client: Etcd3, prefix: string): Promise<string> {
  // The leader's lease: its candidate key is the one created first under the election prefix.
  const res = await client.getAll().prefix(`${prefix}election/`).exec();
  const first = [...res.kvs].sort((x, y) => Number(BigInt(x.create_revision) - BigInt(y.create_revision)))[0]!;
  return first.lease;
}

async function clear(prefix: string): Promise<void> {
  const client = openEtcdClient({ endpoints: etcd.endpoints });
  try {
    await client.delete().prefix(prefix);
  } finally {
    client.close();
  }
}
