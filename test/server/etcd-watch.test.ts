/**
 * Errors of the etcd client surfacing in a watch never kill the server (issue 33: all three
 * servers died on `ClientRuntimeError: Failed to find watcher for IWatchResponse`, thrown by
 * the etcd3 client's watch manager inside its stream's 'data' callback). Against a real etcd:
 *
 *   - the etcd3 client's own watch layer throws that error out of its stream's 'data' event
 *     (inside gRPC, where nothing catches it) on a response it cannot place — why Caravan runs
 *     its watches on EtcdWatch instead;
 *   - EtcdWatch given the same response ignores it; given the library's error on its stream, a
 *     malformed response, or a throw in its owner's callback, it ends once with ETCD_WATCH_ENDED
 *     and never throws;
 *   - leadership and the log's subscription, hit by those errors on their live watches, read
 *     afresh and watch again: the leader keeps leading, a follower follows it, entries appended
 *     afterwards are delivered.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { ClientRuntimeError, type Etcd3, type IWatchResponse } from 'etcd3';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { EtcdWatch, type WatchStream } from '../../src/server/etcd/etcd-watch.js';
import { EtcdLeadership } from '../../src/server/leadership/etcd-leadership.js';
import { EtcdLogBackend } from '../../src/server/log/etcd-log-backend.js';
import type { LogEntry } from '../../src/server/log/log-backend.js';
import { CaravanError } from '../../src/structs/caravan-error.js';

let etcd: EtcdCluster;
let client: Etcd3;
before(async () => {
  etcd = await EtcdCluster.start(1);
  client = openEtcdClient({ endpoints: etcd.endpoints });
});
after(async () => {
  client?.close();
  await etcd?.stop();
});

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A watch response for a watch ID nobody created (what etcd3's manager cannot place). */
function strayResponse(events: unknown[] = []): IWatchResponse {
  return { header: { cluster_id: '0', member_id: '0', revision: '1', raft_term: '1' }, watch_id: '987654', created: false, canceled: false, compact_revision: '0', cancel_reason: '', fragment: false, events } as unknown as IWatchResponse;
}

/** Opens watches like EtcdWatch.open, keeping each stream so the test can emit on it. */
function recordingOpen(streams: WatchStream[]): typeof EtcdWatch.open {
  return async (c, o) => {
    const stream = await c.watchClient.watch();
    streams.push(stream);
    return EtcdWatch.openOn(stream, o);
  };
}

function emitter(stream: WatchStream): EventEmitter {
  return stream as unknown as EventEmitter;
}

describe('errors of the etcd client in a watch', () => {
  it('cancelling a watch does not mark its etcd member failed (which would reset every connection to it)', async () => {
    const pool = (client as unknown as { pool: { markFailed(resource: unknown, err: Error): void } }).pool;
    const original = pool.markFailed.bind(pool);
    const marked: string[] = [];
    pool.markFailed = (resource, err) => {
      marked.push(err.message);
      original(resource, err);
    };
    try {
      for (let i = 0; i < 3; i++) {
        const w = await EtcdWatch.open(client, { range: { prefix: `/cancel-${i}/` }, startRevision: '1', onEvents: () => undefined, onEnd: () => assert.fail('ended') });
        w.cancel();
      }
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(marked, []);
    } finally {
      pool.markFailed = original;
    }
  });

  it('the etcd3 client’s own watch manager throws "Failed to find watcher" out of its stream callback', async () => {
    const watcher = await client.watch().key(`/w-${randomBytes(4).toString('hex')}`).create();
    try {
      const manager = (client as unknown as { watchManager: { stream: EventEmitter } }).watchManager;
      // In production gRPC emits this; a throw from the listener is an uncaught exception.
      assert.throws(
        () => manager.stream.emit('data', strayResponse()),
        (err: unknown) => err instanceof ClientRuntimeError && /Failed to find watcher for IWatchResponse/.test(err.message),
      );
    } finally {
      await watcher.cancel().catch(() => undefined);
    }
  });

  it('EtcdWatch ignores a stray response and ends once, without throwing, on the library’s error', async () => {
    const key = `/w-${randomBytes(4).toString('hex')}`;
    const streams: WatchStream[] = [];
    const ends: CaravanError[] = [];
    const seen: string[] = [];
    const rev = (await client.put(key).value('0').exec()).header.revision;
    await recordingOpen(streams)(client, {
      range: { key },
      startRevision: String(Number(rev) + 1),
      onEvents: (events) => seen.push(...events.map((e) => e.kv.value.toString())),
      onEnd: (err) => ends.push(err),
    });
    const stream = emitter(streams[0]!);
    assert.doesNotThrow(() => stream.emit('data', strayResponse()));
    await client.put(key).value('1');
    await waitFor(() => seen.length === 1, 'the put');
    assert.equal(ends.length, 0);
    const libraryError = new ClientRuntimeError('Failed to find watcher for IWatchResponse');
    assert.doesNotThrow(() => stream.emit('error', libraryError));
    assert.doesNotThrow(() => stream.emit('error', libraryError), 'a second error after the end is swallowed too');
    assert.doesNotThrow(() => stream.emit('end'));
    assert.equal(ends.length, 1);
    assert.equal(ends[0]!.code, 'ETCD_WATCH_ENDED');
    assert.equal(ends[0]!.cause, libraryError);
  });

  it('EtcdWatch ends (not throws) on a malformed response and on a throw in its owner’s callback', async () => {
    const key = `/w-${randomBytes(4).toString('hex')}`;
    const streams: WatchStream[] = [];
    const ends: CaravanError[] = [];
    const rev = (await client.put(key).value('0').exec()).header.revision;
    const open = recordingOpen(streams);
    await open(client, { range: { key }, startRevision: String(Number(rev) + 1), onEvents: () => undefined, onEnd: (err) => ends.push(err) });
    assert.doesNotThrow(() => emitter(streams[0]!).emit('data', strayResponse([{ type: 'Bogus', kv: null }])));
    assert.equal(ends.length, 1);
    assert.match(ends[0]!.message, /handling a watch response failed/);

    await open(client, {
      range: { key },
      startRevision: String(Number(rev) + 1),
      onEvents: () => {
        throw new Error('owner bug');
      },
      onEnd: (err) => ends.push(err),
    });
    await client.put(key).value('2');
    await waitFor(() => ends.length === 2, 'the second watch to end');
    assert.match(ends[1]!.message, /owner bug/);
  });

  it('leadership and the log subscription survive those errors on their live watches and recover', async () => {
    const prefix = `/wl-${randomBytes(4).toString('hex')}/`;
    const streams: WatchStream[] = [];
    const open = recordingOpen(streams);
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown): void => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    const a = new EtcdLeadership({ client, prefix, id: 'a', name: 'a', address: '127.0.0.1:1', leaseTtlSeconds: 1, openWatch: open });
    const bClient = openEtcdClient({ endpoints: etcd.endpoints });
    const b = new EtcdLeadership({ client: bClient, prefix, id: 'b', name: 'b', address: '127.0.0.1:2', leaseTtlSeconds: 1, openWatch: open });
    const log = new EtcdLogBackend({ client, prefix, fence: () => a.fence(), openWatch: open });
    const follower = new EtcdLogBackend({ client: bClient, prefix, fence: () => null, openWatch: open });
    const seen: LogEntry[] = [];
    let stop: (() => void) | undefined;
    try {
      await a.start();
      await waitFor(() => a.isLeader(), 'a to lead');
      await b.start();
      await waitFor(() => b.leaderAddress() === '127.0.0.1:1', 'b to follow a');
      stop = follower.subscribe(1, { onEntries: (es) => seen.push(...es), onError: (e) => assert.fail(e) });
      assert.deepEqual(await log.append([{ type: 't', payload: 'before' }]), [1]);
      await waitFor(() => seen.length === 1, 'the first entry on the follower');

      // The library's error on every live watch stream, then a malformed response on each.
      const hit = streams.length;
      for (const s of streams) {
        emitter(s).emit('error', new ClientRuntimeError('Failed to find watcher for IWatchResponse'));
        emitter(s).emit('data', strayResponse([{ type: 'Bogus', kv: null }]));
      }
      await waitFor(() => streams.length >= hit * 2, 'every watch to be opened again');
      await waitFor(() => a.isLeader() && b.leaderAddress() === '127.0.0.1:1', 'a leading and b following again');
      assert.equal(b.isLeader(), false);
      assert.deepEqual(await log.append([{ type: 't', payload: 'after' }]), [2]);
      await waitFor(() => seen.length === 2, 'the entry appended after the errors');
      assert.deepEqual(
        seen.map((e) => e.payload),
        ['before', 'after'],
      );
      assert.deepEqual(uncaught, []);
    } finally {
      process.off('uncaughtException', onUncaught);
      stop?.();
      await follower.close();
      await log.close();
      await b.close();
      await a.close();
      bClient.close();
      await client.delete().prefix(prefix);
    }
  });
});
