/**
 * Three real Caravan servers on a real etcd, operated as Nomad's are (issue 32):
 *   - `operator raft transfer-leadership` (API on a follower, and CLI) hands the leadership to
 *     the named server, whichever place it has in the election; naming the leader is a no-op;
 *   - `server join` counts servers of the cluster and reports any other address as an error;
 *   - a killed server shows as failed until `operator raft remove-peer` or `server force-leave`
 *     removes it from every server's member list; a live server cannot be removed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';

const hostPort = (a: AgentProcess): string => a.address.replace('http://', '');

interface Member {
  Name: string;
  Addr: string;
  Port: number;
  Status: string;
}

describe('raft operations on three servers on etcd', () => {
  let etcd: EtcdCluster;
  let dir: string;
  let configFile: string;
  const servers: AgentProcess[] = [];
  const names = ['s1', 's2', 's3'];

  /** The live server every live server names as leader. */
  async function agreedLeader(live: AgentProcess[] = servers): Promise<AgentProcess> {
    return waitFor('one leader all servers agree on', async () => {
      const seen = await Promise.all(live.map((s) => api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null)));
      const first = seen[0]?.body;
      if (!first || seen.some((r) => r?.status !== 200 || r.body !== first)) return undefined;
      return live.find((s) => hostPort(s) === first);
    }, 30_000);
  }

  async function members(s: AgentProcess): Promise<Member[]> {
    return (await api<{ Members: Member[] }>(s.address, 'GET', '/v1/agent/members')).body.Members;
  }

  before(async () => {
    etcd = await EtcdCluster.start(1);
    dir = await mkdtemp(join(tmpdir(), 'caravan-raftops-'));
    configFile = join(dir, 'server.hcl');
    await writeFile(configFile, `server {\n  etcd {\n    endpoints = [${etcd.endpoints.map((e) => JSON.stringify(e)).join(', ')}]\n    prefix = "/raft-ops-test/"\n  }\n}\n`);
    for (const name of names) servers.push(await startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-node', name, '-config', configFile] }));
  });
  after(async () => {
    for (const s of servers) {
      await s.kill();
      await s.cleanup();
    }
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('transfer-leadership hands the leadership to the named server, through a follower and the CLI', async () => {
    const leader = await agreedLeader();
    const followers = servers.filter((s) => s !== leader);
    // Through a follower's API (it hands the request to the leader), by address.
    const [first, second] = followers as [AgentProcess, AgentProcess];
    const r = await api<{ To: { Address: string }; Noop: boolean }>(second.address, 'PUT', `/v1/operator/raft/transfer-leadership?address=${hostPort(first)}`);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.To.Address, r.body.Noop], [hostPort(first), false]);
    assert.equal(await agreedLeader(), first);
    // Through the CLI, by ID (the server's name), to the server that led first: it queued last.
    const cli = await runCli(second.address, ['operator', 'raft', 'transfer-leadership', '-peer-id', names[servers.indexOf(leader)]!]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /Transferred leadership to peer/);
    assert.equal(await agreedLeader(), leader);
    // The leader itself: nothing to do.
    const noop = await api<{ Noop: boolean }>(leader.address, 'PUT', `/v1/operator/raft/transfer-leadership?address=${hostPort(leader)}`);
    assert.deepEqual([noop.status, noop.body.Noop], [200, true]);
    const unknown = await api(leader.address, 'PUT', '/v1/operator/raft/transfer-leadership?id=nobody');
    assert.deepEqual([unknown.status, unknown.text], [400, 'id "nobody" was not found in the Raft configuration']);
  });

  it('server join counts the cluster\'s servers and reports other addresses', async () => {
    const ok = await runCli(servers[0]!.address, ['server', 'join', hostPort(servers[1]!)]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /Joined 1 servers successfully/);
    const bad = await runCli(servers[0]!.address, ['server', 'join', '127.0.0.1:1']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Error joining: 127\.0\.0\.1:1: not a server of this cluster/);
  });

  it('a failed server leaves every member list by remove-peer or force-leave; a live one stays', async () => {
    const live = await agreedLeader();
    const live409 = await api(live.address, 'DELETE', `/v1/operator/raft/peer?address=${hostPort(live)}`);
    assert.equal(live409.status, 400);
    assert.match(live409.text, /is alive/);

    // Kill a follower: it shows as failed, then remove-peer (CLI) removes it everywhere.
    const victim = servers.find((s) => s !== live)!;
    const others = servers.filter((s) => s !== victim);
    await victim.kill();
    await waitFor('the killed server failed', async () => ((await members(live)).find((m) => `${m.Addr}:${m.Port}` === hostPort(victim))?.Status === 'failed' ? true : undefined), 30_000);
    const removed = await runCli(live.address, ['operator', 'raft', 'remove-peer', '-peer-address', hostPort(victim)]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, new RegExp(`Removed peer with address "${hostPort(victim)}"`));
    for (const s of others) {
      await waitFor(`${s.address} forgot the removed server`, async () => ((await members(s)).some((m) => `${m.Addr}:${m.Port}` === hostPort(victim)) ? undefined : true));
    }

    // Back again, killed again, and force-left by its member name through the CLI.
    const back = await startAgent({ roleArgs: ['-server'], rawExec: false, dataDir: victim.dataDir, port: victim.port, extraArgs: ['-node', names[servers.indexOf(victim)]!, '-config', configFile] });
    servers[servers.indexOf(victim)] = back;
    await waitFor('the server back in the list', async () => ((await members(live)).find((m) => `${m.Addr}:${m.Port}` === hostPort(back))?.Status === 'alive' ? true : undefined), 30_000);
    await back.kill();
    await waitFor('the server failed again', async () => ((await members(live)).find((m) => `${m.Addr}:${m.Port}` === hostPort(back))?.Status === 'failed' ? true : undefined), 30_000);
    const name = (await members(live)).find((m) => `${m.Addr}:${m.Port}` === hostPort(back))!.Name;
    const left = await runCli(live.address, ['server', 'force-leave', '-prune', name]);
    assert.equal(left.code, 0, left.stderr);
    for (const s of others) {
      await waitFor(`${s.address} forgot the force-left server`, async () => ((await members(s)).some((m) => m.Name === name) ? undefined : true));
    }
  });
});
