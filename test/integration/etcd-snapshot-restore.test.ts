/**
 * Snapshot restore on the etcd-backed HA cluster: a real etcd and three real Caravan servers.
 * A snapshot saved through a follower and restored through a follower (which forwards the file
 * to the leader), then one restored through the leader: every server serves the restored state
 * from its own copy (`?stale`), a refused file changes nothing anywhere, a restarted follower
 * comes back with the restored state, and after the leader is killed the new leader has it too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';

interface Cluster {
  etcd: EtcdCluster;
  servers: (AgentProcess | null)[];
  configFile: string;
  dir: string;
}

async function startServer(c: Cluster, name: string, reuse?: { dataDir: string; port: number }): Promise<AgentProcess> {
  return startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-node', name, '-config', c.configFile], ...(reuse ? { dataDir: reuse.dataDir, port: reuse.port } : {}) });
}

async function leaderOf(c: Cluster): Promise<AgentProcess> {
  return waitFor('a leader', async () => {
    for (const s of c.servers) {
      if (!s) continue;
      const r = await api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null);
      if (r?.status === 200 && `http://${r.body}` === s.address) return s;
    }
    return undefined;
  }, 20_000);
}

function job(id: string): unknown {
  return { Job: { ID: id, Name: id, Type: 'batch', Datacenters: ['dc1'], TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, Resources: { CPU: 20, MemoryMB: 16 } }] }] } };
}

/** What a server holds in its own state (a stale read: no forwarding to the leader). */
async function held(s: AgentProcess): Promise<string> {
  const jobs = (await api<{ ID: string }[]>(s.address, 'GET', '/v1/jobs?stale=true')).body.map((j) => j.ID).sort();
  const vars = (await api<{ Path: string }[]>(s.address, 'GET', '/v1/vars?stale=true')).body.map((v) => v.Path).sort();
  const ns = (await api<{ Name: string }[]>(s.address, 'GET', '/v1/namespaces?stale=true')).body.map((n) => n.Name).sort();
  return JSON.stringify({ jobs, vars, ns });
}

async function everyServerHolds(c: Cluster, want: string, what: string): Promise<void> {
  for (const s of c.servers) {
    if (!s) continue;
    await waitFor(`${what} on ${s.address}`, async () => ((await held(s)) === want ? true : undefined), 20_000);
  }
}

async function save(s: AgentProcess): Promise<Buffer> {
  const res = await fetch(`${s.address}/v1/operator/snapshot`);
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

async function restore(s: AgentProcess, file: Buffer): Promise<{ status: number; text: string }> {
  const res = await fetch(`${s.address}/v1/operator/snapshot`, { method: 'PUT', body: new Uint8Array(file) });
  return { status: res.status, text: await res.text() };
}

describe('snapshot restore on three servers over etcd', () => {
  let c: Cluster;
  before(async () => {
    const etcd = await EtcdCluster.start(1);
    const dir = await mkdtemp(join(tmpdir(), 'caravan-ha-restore-'));
    const configFile = join(dir, 'server.hcl');
    await writeFile(configFile, `server {\n  raft_snapshot_threshold = 50\n  etcd {\n    endpoints = [${etcd.endpoints.map((e) => JSON.stringify(e)).join(', ')}]\n    prefix = "/restore-test/"\n  }\n}\n`);
    c = { etcd, servers: [], configFile, dir };
    for (const name of ['s1', 's2', 's3']) c.servers.push(await startServer(c, name));
  });
  after(async () => {
    for (const s of c.servers) {
      if (!s) continue;
      await s.kill();
      await s.cleanup();
    }
    await c.etcd.stop();
    await rm(c.dir, { recursive: true, force: true });
  });

  it('restores through a follower and through the leader; every server, a restarted one and a new leader serve the restored state', async () => {
    const leader = await leaderOf(c);
    const followers = c.servers.filter((s): s is AgentProcess => s !== null && s !== leader);
    const f = followers[0]!;
    assert.equal((await api(f.address, 'PUT', '/v1/jobs', job('saved'))).status, 200);
    assert.equal((await api(f.address, 'PUT', '/v1/namespace/savedns', { Name: 'savedns' })).status, 200);
    assert.equal((await api(f.address, 'PUT', '/v1/var/saved/v', { Items: { k: 'v' } })).status, 200);
    const savedState = JSON.stringify({ jobs: ['saved'], vars: ['saved/v'], ns: ['default', 'savedns'] });
    await everyServerHolds(c, savedState, 'the state to save');
    const file = await save(f);

    // Changes, some past a log compaction (threshold 50).
    for (let i = 0; i < 30; i++) assert.equal((await api(leader.address, 'PUT', '/v1/jobs', job(`later-${i}`))).status, 200);
    assert.ok((await api(f.address, 'DELETE', '/v1/var/saved/v')).status < 300);
    assert.equal((await api(f.address, 'PUT', '/v1/var/later/v', { Items: { k: 'x' } })).status, 200);
    const changed = JSON.stringify({ jobs: ['saved', ...Array.from({ length: 30 }, (_, i) => `later-${i}`)].sort(), vars: ['later/v'], ns: ['default', 'savedns'] });
    await everyServerHolds(c, changed, 'the changed state');

    // A cut-off file is refused, through a follower too, and nothing changes anywhere.
    const refused = await restore(f, file.subarray(0, file.length - 10));
    assert.equal(refused.status, 400, refused.text);
    await everyServerHolds(c, changed, 'the changed state after a refused restore');

    // Restore through a follower: forwarded to the leader, applied by every server.
    const r1 = await restore(f, file);
    assert.equal(r1.status, 200, r1.text);
    await everyServerHolds(c, savedState, 'the restored state (through a follower)');

    // Change again, then restore through the leader.
    assert.equal((await api(leader.address, 'PUT', '/v1/jobs', job('again'))).status, 200);
    const r2 = await restore(leader, file);
    assert.equal(r2.status, 200, r2.text);
    await everyServerHolds(c, savedState, 'the restored state (through the leader)');
    // The leader's duties run on it: a new registration is accepted and its eval is created.
    assert.equal((await api(leader.address, 'PUT', '/v1/jobs', job('after'))).status, 200);
    const afterState = JSON.stringify({ jobs: ['after', 'saved'], vars: ['saved/v'], ns: ['default', 'savedns'] });
    await everyServerHolds(c, afterState, 'a job registered after the restore');

    // A follower restarted keeps it.
    const i = c.servers.indexOf(f);
    const reuse = { dataDir: f.dataDir, port: f.port };
    await f.kill();
    c.servers[i] = null;
    c.servers[i] = await startServer(c, `s${i + 1}`, reuse);
    await everyServerHolds(c, afterState, 'the state on a restarted follower');

    // The leader killed: the new leader serves the restored state and takes writes.
    const li = c.servers.indexOf(leader);
    await leader.kill();
    await leader.cleanup();
    c.servers[li] = null;
    const next = await leaderOf(c);
    assert.equal(await held(next), afterState);
    assert.equal((await api(next.address, 'PUT', '/v1/jobs', job('new-leader'))).status, 200);
  });
});
