import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Job, JobSummary } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { api, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

const hcl = (id: string): string => sleepJobHcl(id);

test('system gc, reconcile summaries, agent host, ACLs off and license through a real agent', async () => {
  // The agent inherits this environment: /v1/agent/host must redact the secret-looking name.
  process.env['CARAVAN_TEST_SECRET_TOKEN'] = 'hunter2';
  const agent = await startAgent({ roleArgs: ['-server'] });
  delete process.env['CARAVAN_TEST_SECRET_TOKEN'];
  try {
    const a = agent.address;
    const node = mockNode({ ID: randomUUID(), Name: 'n1', Status: 'ready' });
    assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: node })).status, 200);
    const parsed = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: hcl('web'), Canonicalize: true });
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && (await api<unknown[]>(a, 'GET', '/v1/job/web/allocations')).body.length === 0) await new Promise((r) => setTimeout(r, 100));

    // Reconcile: the summary recomputed from the allocations equals the one kept incrementally.
    const before = (await api<JobSummary>(a, 'GET', '/v1/job/web/summary')).body;
    const rec = await api(a, 'PUT', '/v1/system/reconcile/summaries');
    assert.equal(rec.status, 200, rec.text);
    const after = (await api<JobSummary>(a, 'GET', '/v1/job/web/summary')).body;
    assert.deepEqual(after.Summary, before.Summary);
    assert.ok(after.ModifyIndex > before.ModifyIndex);

    // Forced GC: a stopped job's terminal evals and allocs go at once, then the job itself.
    assert.equal((await api(a, 'DELETE', '/v1/job/web')).status, 200);
    const stopDeadline = Date.now() + 10_000;
    for (;;) {
      const allocs = (await api<{ DesiredStatus: string; ClientStatus: string }[]>(a, 'GET', '/v1/job/web/allocations')).body;
      const evals = (await api<{ Status: string }[]>(a, 'GET', '/v1/job/web/evaluations')).body;
      if (allocs.every((x) => x.DesiredStatus === 'stop') && evals.every((e) => e.Status === 'complete')) break;
      assert.ok(Date.now() < stopDeadline, 'job did not stop');
      await new Promise((r) => setTimeout(r, 100));
    }
    // The client never ran them: mark the allocations complete as a client would.
    const allocs = (await api<{ ID: string }[]>(a, 'GET', '/v1/job/web/allocations')).body;
    // A client speaks for its node with the node's SecretID as its token (as Nomad's clients do).
    const upd = await fetch(`${a}/v1/internal/allocs/update`, {
      method: 'PUT',
      headers: { 'X-Nomad-Token': node.SecretID },
      body: JSON.stringify({ Allocs: allocs.map((x) => ({ ID: x.ID, NodeID: node.ID, ClientStatus: 'complete', TaskStates: {} })) }),
    });
    assert.equal(upd.status, 200, await upd.text());
    const gc = await api(a, 'PUT', '/v1/system/gc');
    assert.equal(gc.status, 200, gc.text);
    assert.equal((await api<Job>(a, 'GET', '/v1/job/web')).status, 404);
    assert.equal((await api<unknown[]>(a, 'GET', '/v1/evaluations?filter=' + encodeURIComponent('JobID == "web"'))).body.length, 0);

    // Agent host facts, secrets redacted.
    const host = await api<{ AgentID: string; HostData: { OS: string; Environment: Record<string, string>; Network: unknown[]; Disk: Record<string, { DiskMB: number }> } }>(a, 'GET', '/v1/agent/host');
    assert.equal(host.status, 200, host.text);
    assert.ok(host.body.AgentID);
    assert.match(host.body.HostData.OS, /Linux/);
    assert.equal(host.body.HostData.Environment['CARAVAN_TEST_SECRET_TOKEN'], '<redacted>');
    assert.ok(host.body.HostData.Network.length > 0);
    assert.ok(host.body.HostData.Disk['/']!.DiskMB > 0);

    // ACLs off and the Enterprise-only license, as Nomad answers them.
    const self = await api<{ AccessorID: string; Type: string }>(a, 'GET', '/v1/acl/token/self');
    assert.equal(self.status, 200);
    assert.equal(self.body.AccessorID, 'acls-disabled');
    const policies = await api(a, 'GET', '/v1/acl/policies');
    assert.equal(policies.status, 400);
    assert.equal(policies.text, 'ACL support disabled');
    const license = await api(a, 'GET', '/v1/operator/license');
    assert.equal(license.status, 501);
    assert.equal(license.text, 'Nomad Enterprise only endpoint');
    // The other Enterprise features answer the same; CSI lists are empty (no storage plugins).
    for (const path of ['/v1/quotas', '/v1/quota-usages', '/v1/sentinel/policies', '/v1/recommendations']) {
      const r = await api(a, 'GET', path);
      assert.deepEqual([r.status, r.text], [501, 'Nomad Enterprise only endpoint'], path);
    }
    assert.deepEqual((await api(a, 'GET', '/v1/volumes?type=csi')).body, []);
    assert.deepEqual((await api(a, 'GET', '/v1/plugins?type=csi')).body, []);
    assert.equal((await api(a, 'GET', '/v1/volumes?filter=ID%20%3D%3D')).status, 400);
    assert.equal((await api(a, 'GET', '/v1/volume/csi/db')).status, 404);
    assert.equal((await api(a, 'GET', '/v1/plugin/csi/ebs')).status, 404);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
