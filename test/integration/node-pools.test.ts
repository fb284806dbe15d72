import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mockNode } from '../mock/factories.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

const inPool = (id: string, pool: string): string => sleepJobHcl(id).replace(`job "${id}" {`, `job "${id}" {\n  node_pool = "${pool}"`);

interface Pool {
  Name: string;
  Description: string;
  Meta: Record<string, string> | null;
  ModifyIndex: number;
}


test('node pools: CRUD with the built-ins, jobs placed in their pool, node evaluate and purge, CLI', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-pools-'));
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    const builtins = await api<Pool[]>(a, 'GET', '/v1/node/pools');
    assert.deepEqual(builtins.body.map((p) => p.Name), ['all', 'default']);

    assert.equal((await api(a, 'PUT', '/v1/node/pools', { Name: 'gpu', Description: 'GPU nodes', Meta: { vendor: 'acme' } })).status, 200);
    const gpu = await api<Pool>(a, 'GET', '/v1/node/pool/gpu');
    assert.equal(gpu.status, 200, gpu.text);
    assert.deepEqual([gpu.body.Description, gpu.body.Meta], ['GPU nodes', { vendor: 'acme' }]);

    // Refusals name the problem and change nothing.
    const badName = await api(a, 'PUT', '/v1/node/pools', { Name: 'no spaces' });
    assert.equal(badName.status, 400);
    assert.match(badName.text, /invalid node pool Name "no spaces"/);
    const builtin = await api(a, 'PUT', '/v1/node/pool/default', { Description: 'mine' });
    assert.equal(builtin.status, 400);
    assert.match(builtin.text, /modifying built-in node pool "default" is not allowed/);
    const mismatch = await api(a, 'PUT', '/v1/node/pool/gpu', { Name: 'other' });
    assert.equal(mismatch.status, 400);
    assert.equal((await api(a, 'GET', '/v1/node/pool/nope')).status, 404);
    assert.deepEqual((await api<Pool[]>(a, 'GET', '/v1/node/pools')).body.map((p) => p.Name), ['all', 'default', 'gpu']);

    // A node in the gpu pool, one in default, one in a pool nobody created (which creates it).
    const gpuNode = mockNode({ ID: randomUUID(), Name: 'gpu-1', Status: 'ready', NodePool: 'gpu' });
    const plainNode = mockNode({ ID: randomUUID(), Name: 'plain-1', Status: 'ready' });
    const edgeNode = mockNode({ ID: randomUUID(), Name: 'edge-1', Status: 'ready', NodePool: 'edge' });
    for (const n of [gpuNode, plainNode, edgeNode]) assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: n })).status, 200);
    assert.equal((await api<Pool>(a, 'GET', '/v1/node/pool/edge')).status, 200);

    // A job in the gpu pool is placed only on the gpu node; an unknown pool is refused.
    const parsed = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: inPool('trainer', 'gpu'), Canonicalize: true });
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    const allocs = await waitFor('an allocation', async () => {
      const list = (await api<{ NodeID: string }[]>(a, 'GET', '/v1/job/trainer/allocations')).body;
      return list.length > 0 ? list : undefined;
    });
    assert.ok(allocs.every((x) => x.NodeID === gpuNode.ID));
    const unknown = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: inPool('lost', 'nope'), Canonicalize: true });
    const refused = await api(a, 'PUT', '/v1/jobs', { Job: unknown.body });
    assert.equal(refused.status, 400);
    assert.match(refused.text, /job "lost" is in nonexistent node pool "nope"/);
    assert.equal((await api(a, 'GET', '/v1/job/lost')).status, 404);

    assert.deepEqual((await api<{ ID: string }[]>(a, 'GET', '/v1/node/pool/gpu/nodes')).body.map((n) => n.ID), [gpuNode.ID]);
    assert.equal((await api<unknown[]>(a, 'GET', '/v1/node/pool/all/nodes')).body.length, 3);
    assert.deepEqual((await api<{ ID: string }[]>(a, 'GET', '/v1/node/pool/gpu/jobs')).body.map((j) => j.ID), ['trainer']);
    assert.equal((await api<unknown[]>(a, 'GET', '/v1/node/pool/default/jobs')).body.length, 0);

    // A pool in use is not deleted.
    const inUse = await api(a, 'DELETE', '/v1/node/pool/gpu');
    assert.equal(inUse.status, 400);
    assert.match(inUse.text, /node pool "gpu" has nodes in regions: \[global\]/);
    assert.equal((await api(a, 'DELETE', '/v1/node/pool/all')).status, 400);

    // Node evaluate and purge.
    const ev = await api<{ EvalIDs: string[]; EvalCreateIndex: number }>(a, 'PUT', `/v1/node/${gpuNode.ID}/evaluate`);
    assert.equal(ev.status, 200, ev.text);
    assert.equal(ev.body.EvalIDs.length, 1);
    const evaluation = await api<{ TriggeredBy: string; NodeID: string; JobID: string }>(a, 'GET', `/v1/evaluation/${ev.body.EvalIDs[0]}`);
    assert.deepEqual([evaluation.body.TriggeredBy, evaluation.body.NodeID, evaluation.body.JobID], ['node-update', gpuNode.ID, 'trainer']);
    assert.equal((await api(a, 'PUT', '/v1/node/no-such-node/evaluate')).status, 404);
    const purged = await api<{ EvalIDs: string[] }>(a, 'PUT', `/v1/node/${edgeNode.ID}/purge`);
    assert.equal(purged.status, 200, purged.text);
    assert.equal((await api(a, 'GET', `/v1/node/${edgeNode.ID}`)).status, 404);

    // The CLI: apply from Nomad's HCL specification, list, info, nodes, jobs, delete.
    const spec = join(tmp, 'pool.hcl');
    await writeFile(spec, 'node_pool "batch" {\n  description = "Batch work"\n  meta {\n    tier = "low"\n  }\n}\n');
    const apply = await runCli(a, ['node', 'pool', 'apply', spec]);
    assert.equal(apply.code, 0, apply.stderr);
    assert.equal((await api<Pool>(a, 'GET', '/v1/node/pool/batch')).body.Meta!['tier'], 'low');
    const list = await runCli(a, ['node', 'pool', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /batch\s+Batch work/);
    const info = await runCli(a, ['node', 'pool', 'info', 'gpu']);
    assert.match(info.stdout, /vendor\s+=\s+acme/);
    assert.match((await runCli(a, ['node', 'pool', 'nodes', 'gpu'])).stdout, /gpu-1/);
    assert.match((await runCli(a, ['node', 'pool', 'jobs', 'gpu'])).stdout, /trainer/);
    assert.equal((await runCli(a, ['node', 'pool', 'delete', 'edge'])).code, 0);
    const gone = await runCli(a, ['node', 'pool', 'info', 'edge']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /node pool "edge" not found/);
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
});
