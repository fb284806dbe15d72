/**
 * High availability on etcd, end to end: a real etcd (one member, then three), three real
 * Caravan servers started with -etcd-endpoints and a real client agent.
 *   - kill -9 of the leader during concurrent registrations: every acknowledged one is on the new
 *     leader, evaluations complete, a running allocation keeps running, the killed server comes
 *     back and catches up;
 *   - a leader paused (SIGSTOP) past its lease and resumed appends nothing;
 *   - a fourth server started empty catches up from the snapshot (the log is compacted);
 *   - one etcd member of three killed: the cluster goes on; all of etcd stopped: writes fail with
 *     a clear 5xx and nothing half-applied; etcd back: work resumes.
 * Writes go to whichever live server answers 200 (a follower forwards them to the leader; while
 * there is no leader every server answers 503), as a Nomad client moving through its list does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';

interface Cluster {
  etcd: EtcdCluster;
  servers: (AgentProcess | null)[];
  configFile: string;
  dir: string;
}

/** A server agent on etcd; `dataDir`/`port` reuse a killed one's. */
async function startServer(c: Cluster, name: string, reuse?: { dataDir: string; port: number }): Promise<AgentProcess> {
  return startAgent({
    roleArgs: ['-server'],
    rawExec: false,
    extraArgs: ['-node', name, '-config', c.configFile],
    ...(reuse ? { dataDir: reuse.dataDir, port: reuse.port } : {}),
  });
}

async function startCluster(etcdMembers: number, snapshotThreshold: number): Promise<Cluster> {
  const etcd = await EtcdCluster.start(etcdMembers);
  const dir = await mkdtemp(join(tmpdir(), 'caravan-ha-'));
  const configFile = join(dir, 'server.hcl');
  const endpoints = etcd.endpoints.map((e) => JSON.stringify(e)).join(', ');
  await writeFile(configFile, `server {\n  raft_snapshot_threshold = ${snapshotThreshold}\n  etcd {\n    endpoints = [${endpoints}]\n    prefix = "/ha-test/"\n  }\n}\n`);
  const c: Cluster = { etcd, servers: [], configFile, dir };
  try {
    for (const name of ['s1', 's2', 's3']) c.servers.push(await startServer(c, name));
  } catch (err) {
    await stopCluster(c);
    throw err;
  }
  return c;
}

async function stopCluster(c: Cluster): Promise<void> {
  for (const s of c.servers) {
    if (!s) continue;
    s.proc.kill('SIGCONT');
    await s.kill();
    await s.cleanup();
  }
  await c.etcd.stop();
  await rm(c.dir, { recursive: true, force: true });
}

/** The live server that says it is the leader (its /v1/status/leader is its own address). */
async function leaderOf(c: Cluster, exclude?: AgentProcess): Promise<AgentProcess> {
  return waitFor('a leader', async () => {
    for (const s of c.servers) {
      if (!s || s === exclude) continue;
      const r = await api<string>(s.address, 'GET', '/v1/status/leader').catch(() => null);
      if (r?.status === 200 && `http://${r.body}` === s.address) return s;
    }
    return undefined;
  }, 20_000);
}

function batchJob(id: string, command = '/bin/true', args: string[] = []): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: 'batch',
      Datacenters: ['dc1'],
      TaskGroups: [
        {
          Name: 'g',
          Count: 1,
          RestartPolicy: { Attempts: 0, Mode: 'fail' },
          ReschedulePolicy: { Attempts: 0, Unlimited: false },
          Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command, args }, Resources: { CPU: 20, MemoryMB: 16 } }],
        },
      ],
    },
  };
}

/** Registers `id` on whichever live server accepts it; resolves true once one answered 200. */
async function register(c: Cluster, id: string, deadlineMs = 20_000, body: unknown = batchJob(id)): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  for (let i = 0; Date.now() < deadline; i++) {
    const live = c.servers.filter((s): s is AgentProcess => s !== null);
    const s = live[i % live.length]!;
    const r = await api(s.address, 'PUT', '/v1/jobs', body).catch(() => null);
    if (r?.status === 200) return true;
    await new Promise((res) => setTimeout(res, 50));
  }
  return false;
}

async function jobIds(address: string): Promise<Set<string>> {
  const r = await api<{ ID: string }[]>(address, 'GET', '/v1/jobs');
  assert.equal(r.status, 200, r.text);
  return new Set(r.body.map((j) => j.ID));
}

describe('three servers on a one-member etcd, and a client', () => {
  let c: Cluster;
  let client: AgentProcess;
  before(async () => {
    c = await startCluster(1, 40);
    const clientDir = await mkdtemp('/tmp/cv-');
    client = await startAgent({ roleArgs: ['-client'], dataDir: clientDir, extraArgs: ['-servers', c.servers.map((s) => s!.address.replace('http://', '')).join(',')] });
  });
  after(async () => {
    await client?.kill();
    await client?.cleanup();
    if (c) await stopCluster(c);
  });

  const acked: string[] = [];
  let keeperAlloc = '';

  it('kill -9 of the leader during concurrent registrations: nothing acknowledged is lost, work goes on, the killed server catches up', async () => {
    const leader = await leaderOf(c);
    // A long-running allocation that must survive the failover untouched.
    assert.equal(await register(c, 'keeper', 20_000, batchJob('keeper', '/bin/sleep', ['300'])), true);
    keeperAlloc = await waitFor('keeper running', async () => {
      const r = await api<{ ID: string; ClientStatus: string }[]>(leader.address, 'GET', '/v1/job/keeper/allocations');
      return r.body.find((a) => a.ClientStatus === 'running')?.ID;
    });

    // Four writers, 24 jobs; the leader dies after the first few are acknowledged.
    const ids = Array.from({ length: 24 }, (_, i) => `reg-${i}`);
    let next = 0;
    const writer = async (): Promise<void> => {
      while (next < ids.length) {
        const id = ids[next++]!;
        if (await register(c, id)) acked.push(id);
      }
    };
    const writers = Promise.all([writer(), writer(), writer(), writer()]);
    await waitFor('some registrations', () => (acked.length >= 4 ? true : undefined), 20_000, 10);
    const killedIdx = c.servers.indexOf(leader);
    const killed = { dataDir: leader.dataDir, port: leader.port };
    await leader.kill();
    c.servers[killedIdx] = null;
    await writers;
    assert.ok(acked.length >= ids.length - 4, `most registrations were acknowledged (${acked.length})`);

    const newLeader = await leaderOf(c);
    const onLeader = await jobIds(newLeader.address);
    for (const id of acked) assert.ok(onLeader.has(id), `acknowledged job ${id} is on the new leader`);

    // Every evaluation completes (the new leader rebuilt its broker from state).
    await waitFor('evaluations complete', async () => {
      const r = await api<{ JobID: string; Status: string }[]>(newLeader.address, 'GET', '/v1/evaluations');
      const mine = r.body.filter((e) => acked.includes(e.JobID));
      return mine.length >= acked.length && mine.every((e) => e.Status === 'complete') ? true : undefined;
    }, 30_000);

    // The running allocation is the same one, still running.
    const keeper = await api<{ ID: string; ClientStatus: string }[]>(newLeader.address, 'GET', '/v1/job/keeper/allocations');
    assert.deepEqual(keeper.body.map((a) => [a.ID, a.ClientStatus]), [[keeperAlloc, 'running']]);

    // The killed server comes back on its data dir and catches up.
    const back = await startServer(c, `s${killedIdx + 1}`, killed);
    c.servers[killedIdx] = back;
    await waitFor('the restarted server to catch up', async () => {
      const have = await jobIds(back.address);
      return acked.every((id) => have.has(id)) ? true : undefined;
    });
    const leaderSeen = await api<string>(back.address, 'GET', '/v1/status/leader');
    assert.equal(`http://${leaderSeen.body}`, newLeader.address);
  });

  it('a leader paused past its lease (SIGSTOP) and resumed appends nothing', async () => {
    const leader = await leaderOf(c);
    leader.proc.kill('SIGSTOP');
    try {
      // A write that reaches the paused leader: it is read only once the process runs again.
      const late = api(leader.address, 'PUT', '/v1/jobs', batchJob('late-write')).catch((err: unknown) => ({ status: 0, text: String(err) }));
      const newLeader = await leaderOf(c, leader);
      assert.notEqual(newLeader, leader);
      leader.proc.kill('SIGCONT');
      const res = await late;
      // The deposed leader never appends it: either it refuses the write, or (holding it until it
      // knows the new leader, as Nomad's servers hold an RPC) the new leader writes it. Never a
      // refusal that was written, nor an acknowledgement that was not.
      if (res.status === 200) {
        for (const s of c.servers) {
          await waitFor(`${s!.address} to apply the forwarded write`, async () => ((await jobIds(s!.address)).has('late-write') ? true : undefined));
        }
      } else {
        assert.ok(res.status >= 500, `the deposed leader refused the write (status ${res.status}: ${res.text})`);
        await new Promise((r) => setTimeout(r, 500));
        for (const s of c.servers) assert.equal((await jobIds(s!.address)).has('late-write'), false, `no server has the refused write (${s!.address})`);
      }
      const seen = await waitFor('the old leader to follow the new one', async () => {
        const r = await api<string>(leader.address, 'GET', '/v1/status/leader');
        return `http://${r.body}` === newLeader.address ? true : undefined;
      });
      assert.equal(seen, true);
      // And it still follows: a write on the new leader reaches it.
      assert.equal(await register(c, 'after-pause'), true);
      await waitFor('the resumed server to apply new entries', async () => ((await jobIds(leader.address)).has('after-pause') ? true : undefined));
    } finally {
      leader.proc.kill('SIGCONT');
    }
  });

  it('a fourth server started empty catches up from the snapshot and the tail', async () => {
    // Enough entries for the leader to have snapshotted (threshold 40) and compacted its log.
    for (let i = 0; i < 10; i++) assert.equal(await register(c, `more-${i}`), true);
    const etcdClient = openEtcdClient({ endpoints: c.etcd.endpoints });
    try {
      const compacted = await waitFor('a compaction', async () => {
        const v = await etcdClient.get('/ha-test/log/compacted').string();
        return v && Number(v) > 0 ? Number(v) : undefined;
      });
      assert.ok(compacted > 0);
    } finally {
      etcdClient.close();
    }
    const expected = await jobIds((await leaderOf(c)).address);
    const fourth = await startServer(c, 's4');
    c.servers.push(fourth);
    await waitFor('the fourth server to catch up', async () => {
      const have = await jobIds(fourth.address);
      return [...expected].every((id) => have.has(id)) ? true : undefined;
    });
    assert.ok(expected.has('keeper') && expected.has('more-9'));
  });
});

describe('three servers on a three-member etcd', () => {
  let c: Cluster;
  before(async () => {
    c = await startCluster(3, 8192);
  });
  after(async () => {
    if (c) await stopCluster(c);
  });

  it('goes on when one etcd member is killed; with all of etcd stopped writes fail with a clear 5xx and nothing half-applied; resumes when etcd is back', async () => {
    await leaderOf(c);
    assert.equal(await register(c, 'before'), true);
    await c.etcd.stopMember(0, true);
    assert.equal(await register(c, 'one-member-down'), true, 'the cluster goes on with two etcd members of three');

    await c.etcd.stopMember(1);
    await c.etcd.stopMember(2);
    const leader = c.servers[0]!;
    const failed = await Promise.all(
      c.servers.map((s) => api<string>(s!.address, 'PUT', '/v1/jobs', batchJob('while-down')).catch((err: unknown) => ({ status: 0, body: String(err), text: String(err) }))),
    );
    for (const r of failed) {
      assert.ok(r.status >= 500 && r.status < 600, `a 5xx (got ${r.status}: ${r.text})`);
      assert.match(r.text, /etcd|leader|log/i, 'the error says what failed');
    }
    for (const i of [0, 1, 2]) await c.etcd.startMember(i, false);
    // Work resumes: a leader again, and writes go through.
    await leaderOf(c);
    assert.equal(await register(c, 'after', 30_000), true);
    for (const s of c.servers) {
      await waitFor(`${s!.address} to apply`, async () => ((await jobIds(s!.address)).has('after') ? true : undefined));
      const ids = await jobIds(s!.address);
      assert.ok(ids.has('before') && ids.has('one-member-down'));
      assert.equal(ids.has('while-down'), false, 'the refused write left nothing behind');
    }
    assert.ok(leader);
  });
});
