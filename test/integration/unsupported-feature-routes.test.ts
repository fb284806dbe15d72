/**
 * The last routes of Nomad's API Caravan serves for what it has: the agent's scheduler-worker
 * report (its real workers), the host volume routes' answers to malformed requests, and the
 * clear answers for features it does not have yet — node identities, the workload-identity
 * keyring and its .well-known documents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startAgent } from './helpers/agent-process.js';

interface WorkersInfo {
  ServerID: string;
  Schedulers: { ID: string; EnabledSchedulers: string[]; Started: string; Status: string; WorkloadStatus: string }[];
}

test('GET /v1/agent/schedulers reports the leader\'s running workers, and /config the pool', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  try {
    const a = agent.address;
    const config = await api<{ ServerID: string; NumSchedulers: number; EnabledSchedulers: string[] }>(a, 'GET', '/v1/agent/schedulers/config');
    assert.equal(config.status, 200, config.text);
    assert.ok(config.body.NumSchedulers >= 1);
    assert.ok(config.body.EnabledSchedulers.includes('service') && config.body.EnabledSchedulers.includes('batch'));
    // The workers start with the leader's duties: wait for them.
    let info: WorkersInfo = { ServerID: '', Schedulers: [] };
    for (let i = 0; i < 100 && info.Schedulers.length === 0; i++) {
      const r = await api<WorkersInfo>(a, 'GET', '/v1/agent/schedulers');
      assert.equal(r.status, 200, r.text);
      info = r.body;
      if (info.Schedulers.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(info.ServerID, config.body.ServerID);
    assert.match(info.ServerID, /\.global$/);
    assert.equal(info.Schedulers.length, config.body.NumSchedulers);
    assert.equal(new Set(info.Schedulers.map((w) => w.ID)).size, info.Schedulers.length);
    for (const w of info.Schedulers) {
      assert.equal(w.Status, 'Started');
      assert.ok(['WaitingToDequeue', 'WaitingForRaft', 'Scheduling', 'Backoff'].includes(w.WorkloadStatus), w.WorkloadStatus);
      assert.deepEqual(w.EnabledSchedulers, config.body.EnabledSchedulers);
      assert.ok(!Number.isNaN(Date.parse(w.Started)) && Date.parse(w.Started) > 0, w.Started);
    }
    // The pool sent back unchanged is accepted (Nomad's round-trip); a resize is refused, naming the option.
    const same = await api(a, 'PUT', '/v1/agent/schedulers/config', config.body);
    assert.equal(same.status, 200, same.text);
    const resize = await api(a, 'PUT', '/v1/agent/schedulers/config', { NumSchedulers: config.body.NumSchedulers + 1 });
    assert.equal(resize.status, 501);
    assert.match(resize.text, /num_schedulers/);
    const bad = await api(a, 'PUT', '/v1/agent/schedulers/config', { NumSchedulers: -1 });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /NumSchedulers/);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('features Caravan has not yet answer clear errors: node identities, the keyring; host volume writes name bad fields', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  try {
    const a = agent.address;
    // Dynamic host volumes (built: dynamic-host-volumes.test.ts): an empty list, an unknown
    // volume, and malformed writes refused naming the field; CSI volumes: none.
    const list = await api(a, 'GET', '/v1/volumes?type=host');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body, []);
    assert.deepEqual((await api(a, 'GET', '/v1/volumes?type=csi')).body, []);
    const one = await api(a, 'GET', '/v1/volume/host/vol');
    assert.equal(one.status, 404);
    assert.equal(one.text, 'volume not found');
    const noVolume = await api(a, 'PUT', '/v1/volume/host/create', {});
    assert.equal(noVolume.status, 400, noVolume.text);
    assert.match(noVolume.text, /^Volume: is required/);
    const noNode = await api(a, 'POST', '/v1/volume/host/register', { Volume: { Name: 'v', HostPath: '/srv/v' } });
    assert.equal(noNode.status, 400, noNode.text);
    assert.match(noNode.text, /Volume\.NodeID: missing node ID/);
    assert.equal((await api(a, 'DELETE', '/v1/volume/host/vol')).status, 404);
    // Node identities: the agent's own node has none; an unknown node is Nomad's 400.
    const own = await api(a, 'GET', '/v1/client/identity');
    assert.equal(own.status, 501, own.text);
    assert.match(own.text, /SecretID/);
    const renew = await api(a, 'POST', '/v1/client/identity/renew', {});
    assert.equal(renew.status, 501, renew.text);
    const unknown = await api(a, 'POST', '/v1/client/identity/renew?node_id=00000000-0000-0000-0000-000000000000');
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /Unknown node/);
    // The keyring is served now: test/integration/workload-identity-keyring.test.ts.
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('a client-only agent answers /v1/agent/schedulers "Server only endpoint", as Nomad', async () => {
  const agent = await startAgent({ roleArgs: ['-client', '-servers=127.0.0.1:1'] });
  try {
    const r = await api(agent.address, 'GET', '/v1/agent/schedulers');
    assert.equal(r.status, 400);
    assert.match(r.text, /Server only endpoint/);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
