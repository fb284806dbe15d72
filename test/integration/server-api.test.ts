import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AllocListStub, Evaluation } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';

function jobHcl(id: string, count = 1): string {
  return `
job "${id}" {
  datacenters = ["dc1"]
  group "g" {
    count = ${count}
    # The node is registered by hand and runs nothing: no deployment for \`job run\` to wait on.
    update {
      max_parallel = 0
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;
}

async function registerNode(address: string): Promise<string> {
  const id = randomUUID();
  const node = mockNode({ ID: id, Name: `node-${id.slice(0, 4)}`, Status: 'ready' });
  const res = await api<{ HeartbeatTTL: number }>(address, 'PUT', '/v1/internal/node/register', { Node: node });
  assert.equal(res.status, 200, res.text);
  assert.ok(res.body.HeartbeatTTL > 0);
  return id;
}

test('server agent: job run places allocations on a registered node, indexes and blocking queries work', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-jobs-'));
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const nodeId = await registerNode(agent.address);
    const before = await api(agent.address, 'GET', '/v1/jobs');
    assert.equal(before.status, 200);

    const file = join(tmp, 'web.hcl');
    await writeFile(file, jobHcl('web', 2));
    const run = await runCli(agent.address, ['job', 'run', file]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /==> \S+Z: Monitoring evaluation "[0-9a-f]{8}"/);
    assert.match(run.stdout, /Allocation "[0-9a-f]{8}" created: node "[0-9a-f]{8}", group "g"/);

    const allocs = await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/web/allocations');
    assert.equal(allocs.body.length, 2);
    for (const a of allocs.body) assert.equal(a.NodeID, nodeId);
    const after = await api(agent.address, 'GET', '/v1/jobs');
    assert.ok(after.index > before.index, `index moved: ${before.index} -> ${after.index}`);

    // A blocking query holds until the jobs table changes, then answers the new state.
    let settled = false;
    const blocked = api<{ ID: string }[]>(agent.address, 'GET', `/v1/jobs?index=${after.index}&wait=60s`).then((r) => {
      settled = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(settled, false, 'blocking query returned before any change');
    await writeFile(join(tmp, 'api.hcl'), jobHcl('api'));
    const run2 = await runCli(agent.address, ['job', 'run', '-detach', join(tmp, 'api.hcl')]);
    assert.equal(run2.code, 0, run2.stderr);
    const woke = await blocked;
    assert.ok(woke.index > after.index);
    assert.deepEqual(woke.body.map((j) => j.ID).sort(), ['api', 'web']);

    const status = await runCli(agent.address, ['job', 'status', 'web']);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /Allocations\nID\s+Node ID/);
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
});

test('server agent: malformed requests are 4xx and leave the agent running', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const rows = [
      { name: 'malformed JSON', method: 'PUT', path: '/v1/jobs', body: '{"Job": ', want: 400 },
      { name: 'no Job', method: 'PUT', path: '/v1/jobs', body: {}, want: 400 },
      { name: 'invalid job', method: 'PUT', path: '/v1/jobs', body: { Job: { ID: 'x', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }] } }, want: 400 },
      { name: 'unknown job', method: 'GET', path: '/v1/job/nope', body: undefined, want: 404 },
      { name: 'unknown route', method: 'GET', path: '/v1/nothing', body: undefined, want: 404 },
      { name: 'bad index', method: 'GET', path: '/v1/jobs?index=x', body: undefined, want: 400 },
      { name: 'bad node', method: 'PUT', path: '/v1/internal/node/register', body: { Node: { Name: 1 } }, want: 400 },
    ];
    for (const r of rows) {
      const res = await api(agent.address, r.method, r.path, r.body);
      assert.equal(res.status, r.want, `${r.name}: ${res.text}`);
    }
    const health = await api(agent.address, 'GET', '/v1/agent/health');
    assert.equal(health.status, 200);
    assert.deepEqual((await api(agent.address, 'GET', '/v1/jobs')).body, []);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('server agent: after SIGKILL and restart, acknowledged jobs are there and pending evals complete', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-crash-'));
  // First run with no scheduler workers, so the registration's eval stays pending.
  const config = join(tmp, 'agent.hcl');
  await writeFile(config, 'server {\n  enabled = true\n  num_schedulers = 0\n}\n');
  const first = await startAgent({ roleArgs: ['-config', config] });
  const nodeId = await registerNode(first.address);
  await writeFile(join(tmp, 'db.hcl'), jobHcl('db'));
  const run = await runCli(first.address, ['job', 'run', '-detach', join(tmp, 'db.hcl')]);
  assert.equal(run.code, 0, run.stderr);
  const evalId = /Evaluation ID: (\S+)/.exec(run.stdout)?.[1];
  assert.ok(evalId, run.stdout);
  const pending = await api<Evaluation>(first.address, 'GET', `/v1/evaluation/${evalId}`);
  assert.equal(pending.body.Status, 'pending');
  await first.kill();

  const second = await startAgent({ roleArgs: ['-server'], dataDir: first.dataDir, port: first.port });
  try {
    const job = await api<{ ID: string }>(second.address, 'GET', '/v1/job/db');
    assert.equal(job.status, 200, job.text);
    let ev = (await api<Evaluation>(second.address, 'GET', `/v1/evaluation/${evalId}`)).body;
    let index = 0;
    while (ev.Status === 'pending') {
      const r = await api<Evaluation>(second.address, 'GET', `/v1/evaluation/${evalId}?index=${index}&wait=10s`);
      ev = r.body;
      index = r.index;
    }
    assert.equal(ev.Status, 'complete');
    const allocs = await api<AllocListStub[]>(second.address, 'GET', '/v1/job/db/allocations');
    assert.equal(allocs.body.length, 1);
    assert.equal(allocs.body[0]!.NodeID, nodeId);
  } finally {
    await second.stop();
    await second.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
});
