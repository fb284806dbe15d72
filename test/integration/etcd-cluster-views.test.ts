/**
 * Three real Caravan servers on a real etcd and a real client agent, seen from the outside:
 *   - every server shows the same cluster (status leader and peers, agent members, the raft
 *     configuration, `caravan server members`, `caravan operator raft list-peers`);
 *   - a follower forwards writes and reads to the leader, answers `?stale` itself, and says it
 *     knows the leader (X-Nomad-KnownLeader, X-Nomad-LastContact);
 *   - a client given one follower learns every server, and when that server is killed (and then
 *     the leader too) it moves to another: new work reaches it, and its node is never marked down.
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

function sleepJob(id: string): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'service',
      Datacenters: ['dc1'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['300'] }, Resources: { CPU: 20, MemoryMB: 16 } }] }],
    },
  };
}

describe('three servers on etcd and a client, seen from the outside', () => {
  let etcd: EtcdCluster;
  let dir: string;
  let configFile: string;
  const servers: (AgentProcess | null)[] = [];
  let client: AgentProcess | undefined;

  /** The live server every live server names as leader. */
  async function agreedLeader(): Promise<AgentProcess> {
    return waitFor('one leader all servers agree on', async () => {
      const live = servers.filter((s): s is AgentProcess => s !== null);
      const seen = await Promise.all(live.map((s) => api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null)));
      const first = seen[0]?.body;
      if (!first || seen.some((r) => r?.status !== 200 || r.body !== first)) return undefined;
      return live.find((s) => hostPort(s) === first);
    }, 20_000);
  }

  before(async () => {
    etcd = await EtcdCluster.start(1);
    dir = await mkdtemp(join(tmpdir(), 'caravan-views-'));
    configFile = join(dir, 'server.hcl');
    await writeFile(configFile, `server {\n  etcd {\n    endpoints = [${etcd.endpoints.map((e) => JSON.stringify(e)).join(', ')}]\n    prefix = "/views-test/"\n  }\n}\n`);
    for (const name of ['s1', 's2', 's3']) {
      servers.push(await startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-node', name, '-config', configFile] }));
    }
  });
  after(async () => {
    await client?.kill();
    await client?.cleanup();
    for (const s of servers) {
      await s?.kill();
      await s?.cleanup();
    }
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('every server shows the same cluster: leader, peers, members, raft configuration, CLI', async () => {
    const leader = await agreedLeader();
    const all = servers.map((s) => hostPort(s!)).sort();
    for (const s of servers) {
      await waitFor(`peers seen by ${s!.address}`, async () => {
        const peers = await api<string[]>(s!.address, 'GET', '/v1/status/peers');
        return JSON.stringify([...peers.body].sort()) === JSON.stringify(all) ? true : undefined;
      });
      const members = await api<{ Members: { Name: string; Addr: string; Port: number; Status: string; Tags: Record<string, string> }[] }>(s!.address, 'GET', '/v1/agent/members');
      assert.deepEqual(members.body.Members.map((m) => `${m.Addr}:${m.Port}`).sort(), all);
      assert.deepEqual(members.body.Members.filter((m) => m.Tags['leader'] === '1').map((m) => `${m.Addr}:${m.Port}`), [hostPort(leader)]);
      assert.ok(members.body.Members.every((m) => m.Status === 'alive'));
      const raft = await api<{ Servers: { Node: string; Address: string; Leader: boolean; Voter: boolean }[] }>(s!.address, 'GET', '/v1/operator/raft/configuration');
      assert.deepEqual(raft.body.Servers.map((x) => x.Address).sort(), all);
      assert.deepEqual(raft.body.Servers.filter((x) => x.Leader).map((x) => x.Address), [hostPort(leader)]);
    }
    const follower = servers.find((s) => s !== leader)!;
    const cliMembers = await runCli(follower.address, ['server', 'members']);
    assert.equal(cliMembers.code, 0, cliMembers.stderr);
    const rows = cliMembers.stdout.trim().split('\n').slice(1);
    assert.equal(rows.length, 3, cliMembers.stdout);
    assert.deepEqual(rows.filter((r) => /\btrue\b/.test(r)).length, 1, cliMembers.stdout);
    assert.match(rows.find((r) => /\btrue\b/.test(r)) ?? '', new RegExp(`\\b${leader.port}\\b`));
    const peers = await runCli(follower.address, ['operator', 'raft', 'list-peers']);
    assert.equal(peers.code, 0, peers.stderr);
    const peerRows = peers.stdout.trim().split('\n').slice(1);
    assert.equal(peerRows.length, 3, peers.stdout);
    assert.deepEqual(peerRows.filter((r) => /\bleader\b/.test(r)).map((r) => r.includes(hostPort(leader))), [true], peers.stdout);
  });

  it('a follower forwards writes and reads to the leader and answers ?stale itself', async () => {
    const leader = await agreedLeader();
    const follower = servers.find((s) => s !== leader)!;
    const put = await api<{ EvalID: string }>(follower.address, 'PUT', '/v1/jobs', sleepJob('via-follower'));
    assert.equal(put.status, 200, put.text);
    assert.ok(put.body.EvalID);
    const onLeader = await api(leader.address, 'GET', '/v1/job/via-follower');
    assert.equal(onLeader.status, 200, 'the write reached the leader');
    const res = await fetch(`${follower.address}/v1/job/via-follower`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-nomad-knownleader'), 'true');
    const stale = await fetch(`${follower.address}/v1/jobs?stale`);
    assert.equal(stale.status, 200);
    assert.equal(stale.headers.get('x-nomad-knownleader'), 'true');
    assert.match(stale.headers.get('x-nomad-lastcontact') ?? '', /^\d+$/);
    await waitFor('the follower applied the job', async () => {
      const r = await api<{ ID: string }[]>(follower.address, 'GET', '/v1/jobs?stale');
      return r.body.some((j) => j.ID === 'via-follower') ? true : undefined;
    });
  });

  it('a follower that is also a client (-server -client) registers its node through the leader', async () => {
    const leader = await agreedLeader();
    const both = await startAgent({ roleArgs: ['-server', '-client'], extraArgs: ['-node', 's4', '-config', configFile] });
    servers.push(both);
    try {
      assert.notEqual(await agreedLeader(), both, 'the new server follows');
      const id = await waitFor('the follower-client node ready on the leader', async () => {
        const r = await api<{ ID: string; Name: string; Status: string }[]>(leader.address, 'GET', '/v1/nodes');
        return r.body.find((n) => n.Name === 's4' && n.Status === 'ready')?.ID;
      });
      // Its node goes with it: nothing more is placed there.
      const off = await api(both.address, 'PUT', `/v1/node/${id}/eligibility`, { Eligibility: 'ineligible' });
      assert.equal(off.status, 200, off.text);
    } finally {
      servers.splice(servers.indexOf(both), 1);
      await both.kill();
      await both.cleanup();
    }
  });

  it('a client given one follower learns every server and moves on when its server, then the leader, is killed', async () => {
    let leader = await agreedLeader();
    const first = servers.find((s) => s !== leader)!;
    client = await startAgent({ roleArgs: ['-client'], dataDir: await mkdtemp('/tmp/cv-views-'), extraArgs: ['-servers', hostPort(first)] });
    const nodeId = await waitFor('the client registered', async () => {
      const r = await api<{ ID: string; Name: string; Status: string }[]>(leader.address, 'GET', '/v1/nodes');
      return r.body.find((n) => n.Name !== 's4' && n.Status === 'ready')?.ID;
    });
    const running = async (job: string, via: AgentProcess): Promise<void> => {
      assert.equal((await api(via.address, 'PUT', '/v1/jobs', sleepJob(job))).status, 200);
      await waitFor(`${job} running on the client`, async () => {
        const r = await api<{ NodeID: string; ClientStatus: string }[]>(via.address, 'GET', `/v1/job/${job}/allocations`).catch(() => null);
        return r?.body.some((a) => a.NodeID === nodeId && a.ClientStatus === 'running') ? true : undefined;
      }, 30_000);
    };
    await running('before', leader);

    // The client's only configured server goes away: it must use the others it learnt of.
    const firstIdx = servers.indexOf(first);
    await first.kill();
    await first.cleanup();
    servers[firstIdx] = null;
    leader = await agreedLeader();
    await running('after-its-server', leader);

    // Then the leader: a new one is elected, the client keeps working through the last server.
    const leaderIdx = servers.indexOf(leader);
    await leader.kill();
    await leader.cleanup();
    servers[leaderIdx] = null;
    const last = await agreedLeader();
    await running('after-the-leader', last);
    const node = await api<{ Status: string; Events: { Message: string }[] }>(last.address, 'GET', `/v1/node/${nodeId}`);
    assert.equal(node.body.Status, 'ready');
    assert.ok(!node.body.Events.some((e) => /heartbeat missed/i.test(e.Message)), 'the node was never marked down');
  });
});
