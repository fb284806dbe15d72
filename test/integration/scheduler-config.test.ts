import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mockNode } from '../mock/factories.js';
import { api, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

const hcl = (id: string): string => sleepJobHcl(id, { cpu: 500, memory: 256 });

interface Config {
  SchedulerConfig: { SchedulerAlgorithm: string; ModifyIndex: number; RejectJobRegistration: boolean; PreemptionConfig: { SystemSchedulerEnabled: boolean } };
}

async function run(address: string, id: string): Promise<{ status: number; text: string }> {
  const parsed = await api<Record<string, unknown>>(address, 'POST', '/v1/jobs/parse', { JobHCL: hcl(id), Canonicalize: true });
  assert.equal(parsed.status, 200, parsed.text);
  return api(address, 'PUT', '/v1/jobs', { Job: parsed.body });
}

async function nodeOf(address: string, id: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const allocs = (await api<{ NodeID: string }[]>(address, 'GET', `/v1/job/${id}/allocations`)).body;
    if (allocs.length > 0) return allocs[0]!.NodeID;
    assert.ok(Date.now() < deadline, `job ${id} was not placed`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('scheduler configuration: read, replaced with check-and-set, and honoured by placement', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], minHeartbeatTtl: '1h' });
  try {
    const a = agent.address;
    for (const name of ['n1', 'n2']) {
      const node = mockNode({ ID: randomUUID(), Name: name, Status: 'ready' });
      assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: node })).status, 200);
    }
    const initial = await api<Config>(a, 'GET', '/v1/operator/scheduler/configuration');
    assert.equal(initial.status, 200, initial.text);
    assert.equal(initial.body.SchedulerConfig.SchedulerAlgorithm, 'binpack');
    assert.equal(initial.body.SchedulerConfig.PreemptionConfig.SystemSchedulerEnabled, true);

    // Bad input names the field and changes nothing.
    const bad = await api(a, 'PUT', '/v1/operator/scheduler/configuration', { SchedulerAlgorithm: 'random' });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /SchedulerAlgorithm: invalid scheduler algorithm "random"/);
    const badPre = await api(a, 'PUT', '/v1/operator/scheduler/configuration', { PreemptionConfig: { BatchSchedulerEnabled: 'yes' } });
    assert.equal(badPre.status, 400);
    assert.match(badPre.text, /PreemptionConfig.BatchSchedulerEnabled: must be a boolean/);

    // Spread: the second job goes to the empty node.
    const set = await api<{ Updated: boolean; Index: number }>(a, 'PUT', '/v1/operator/scheduler/configuration', { SchedulerAlgorithm: 'spread' });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.Updated, true);
    const now = (await api<Config>(a, 'GET', '/v1/operator/scheduler/configuration')).body.SchedulerConfig;
    assert.equal(now.SchedulerAlgorithm, 'spread');
    assert.equal(now.ModifyIndex, set.body.Index);
    assert.equal((await run(a, 's1')).status, 200);
    const s1 = await nodeOf(a, 's1');
    assert.equal((await run(a, 's2')).status, 200);
    assert.notEqual(await nodeOf(a, 's2'), s1, 'spread places the second job on the emptier node');

    // A stale check-and-set index changes nothing; the right one applies.
    const stale = await api<{ Updated: boolean }>(a, 'PUT', `/v1/operator/scheduler/configuration?cas=${now.ModifyIndex - 1}`, { SchedulerAlgorithm: 'binpack' });
    assert.equal(stale.status, 200);
    assert.equal(stale.body.Updated, false);
    assert.equal((await api<Config>(a, 'GET', '/v1/operator/scheduler/configuration')).body.SchedulerConfig.SchedulerAlgorithm, 'spread');
    const cas = await api<{ Updated: boolean }>(a, 'PUT', `/v1/operator/scheduler/configuration?cas=${now.ModifyIndex}`, { SchedulerAlgorithm: 'binpack' });
    assert.equal(cas.body.Updated, true);

    // Binpack: the next two jobs share a node (the fuller one once the first is placed).
    assert.equal((await run(a, 'b1')).status, 200);
    const b1 = await nodeOf(a, 'b1');
    assert.equal((await run(a, 'b2')).status, 200);
    assert.equal(await nodeOf(a, 'b2'), b1, 'binpack places the second job on the fuller node');

    // RejectJobRegistration turns registration off.
    assert.equal((await api(a, 'PUT', '/v1/operator/scheduler/configuration', { RejectJobRegistration: true })).status, 200);
    const rejected = await run(a, 'r1');
    assert.equal(rejected.status, 400);
    assert.match(rejected.text, /disabled by the scheduler configuration/);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
