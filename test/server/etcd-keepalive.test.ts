/**
 * A connection to etcd that dies silently — packets dropped, no FIN, no RST (a member's host
 * gone, a cable, a NAT table) — is noticed by gRPC keepalive pings, not when TCP gives up
 * (minutes to hours): a watch on it ends, so its owner reads afresh. Without the pings a
 * follower's election watch on such a connection would never learn of a new leader.
 *
 * Against a real etcd, through a loopback TCP relay the test can "cut": it keeps both sockets
 * open and drops every byte from then on. The client is given short keepalive times (the
 * defaults, 10 s + 5 s, respect etcd's minimum ping interval of 5 s; the relay is cut before the
 * first ping reaches etcd, so etcd never sees these faster ones).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Etcd3 } from 'etcd3';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { EtcdWatch } from '../../src/server/etcd/etcd-watch.js';
import type { CaravanError } from '../../src/structs/caravan-error.js';

let etcd: EtcdCluster;
before(async () => {
  etcd = await EtcdCluster.start(1);
});
after(async () => {
  await etcd?.stop();
});

/** A TCP relay to `target` that can be cut silently: sockets stay open, bytes are dropped. */
async function cuttableRelay(target: URL): Promise<{ endpoint: string; cut(): void; close(): void }> {
  let cut = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((down) => {
    const up = connect(Number(target.port), target.hostname);
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        down.destroy();
        up.destroy();
      });
    }
    down.on('data', (d: Buffer) => void (cut || up.write(d)));
    up.on('data', (d: Buffer) => void (cut || down.write(d)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => void (cut = true),
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

describe('etcd connection keepalive', () => {
  it('a watch on a connection that went silent ends (keepalive pings unanswered) instead of waiting forever', async () => {
    const relay = await cuttableRelay(new URL(etcd.endpoints[0]!));
    const client: Etcd3 = openEtcdClient({ endpoints: [relay.endpoint] }, { timeMs: 1000, timeoutMs: 1000 });
    let ended: CaravanError<'ETCD_WATCH_ENDED'> | null = null;
    let watch: EtcdWatch | null = null;
    try {
      const rev = (await client.get('/keepalive-probe').exec()).header.revision;
      watch = await EtcdWatch.open(client, { range: { key: '/keepalive-probe' }, startRevision: String(BigInt(rev) + 1n), onEvents: () => undefined, onEnd: (err) => void (ended = err) });
      relay.cut();
      // Nothing else can end it: no error reaches the client, the relay's sockets stay open.
      const deadline = Date.now() + 30_000;
      while (ended === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(ended, 'the watch ended once its connection stopped answering pings');
    } finally {
      watch?.cancel();
      client.close();
      relay.close();
    }
  });
});
