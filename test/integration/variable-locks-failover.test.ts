/**
 * Variable locks across a leader failover, with three real servers on a real etcd: a lock held
 * when the leader is killed (kill -9) is still held on the new leader, which refuses a second
 * acquire, renews it with the holder's ID, and — its TTL timers rebuilt from the replicated
 * state — releases a short lock whose TTL then passes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Variable } from '../../src/structs/variable.js';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';

test('variable locks survive a leader failover; the new leader renews and expires them', async () => {
  const etcd = await EtcdCluster.start(1);
  const dir = await mkdtemp(join(tmpdir(), 'caravan-lock-ha-'));
  const servers: (AgentProcess | null)[] = [];
  try {
    const configFile = join(dir, 'server.hcl');
    const endpoints = etcd.endpoints.map((e) => JSON.stringify(e)).join(', ');
    await writeFile(configFile, `server {\n  etcd {\n    endpoints = [${endpoints}]\n    prefix = "/lock-ha/"\n  }\n}\n`);
    for (const name of ['s1', 's2', 's3']) servers.push(await startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-node', name, '-config', configFile] }));
    const leaderOf = (exclude?: AgentProcess) =>
      waitFor('a leader', async () => {
        for (const s of servers) {
          if (!s || s === exclude) continue;
          const r = await api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null);
          if (r?.status === 200 && `http://${r.body}` === s.address) return s;
        }
        return undefined;
      }, 30_000);
    const leader = await leaderOf();
    const follower = servers.find((s) => s !== leader)!;

    // Acquired through a follower (forwarded to the leader): one long lock, one short.
    const held = await api<Variable>(follower.address, 'PUT', '/v1/var/ha/held?lock-acquire', { Items: { k: 'v' }, Lock: { TTL: '1h', LockDelay: '0s' } });
    assert.equal(held.status, 200, held.text);
    const short = await api<Variable>(follower.address, 'PUT', '/v1/var/ha/short?lock-acquire', { Items: { k: 'v' }, Lock: { TTL: '4s', LockDelay: '0s' } });
    assert.equal(short.status, 200, short.text);

    await leader.kill();
    servers[servers.indexOf(leader)] = null;
    const next = await leaderOf(leader);
    const got = await waitFor('the lock on the new leader', async () => {
      const r = await api<Variable>(next.address, 'GET', '/v1/var/ha/held').catch(() => null);
      return r?.status === 200 ? r.body : undefined;
    });
    assert.equal(got.Lock?.TTL, '1h0m0s');
    assert.equal((await api(next.address, 'PUT', '/v1/var/ha/held?lock-acquire', { Lock: { TTL: '10s' } })).status, 409);
    assert.equal((await api(next.address, 'PUT', '/v1/var/ha/held?lock-renew', { Lock: { ID: held.body.Lock!.ID } })).status, 200);
    // The new leader's timers came from the replicated locks: the short one expires.
    await waitFor('the short lock expired on the new leader', async () => ((await api<Variable>(next.address, 'GET', '/v1/var/ha/short')).body.Lock === undefined ? true : undefined), 60_000);
    assert.notEqual((await api<Variable>(next.address, 'GET', '/v1/var/ha/held')).body.Lock, undefined, 'the long lock is still held');
  } finally {
    for (const s of servers) {
      if (!s) continue;
      await s.kill();
      await s.cleanup();
    }
    await etcd.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
