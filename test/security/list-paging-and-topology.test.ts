/**
 * What a caller controls on the paged lists and the web UI's topology reads: next_token,
 * per_page, filter and the token. A malformed paging token or filter is a 400 naming it (never a
 * crash or a full scan answered as a page), a huge per_page is no amplifier, and the topology
 * sums need `node:read` as /v1/nodes does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AclToken } from '../../src/structs/acl.js';
import { mockNode } from '../mock/factories.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from '../http/real-server.js';

let s: ServerUnderTest;
let mgmt: AclToken;
let jobsOnly: AclToken;

async function call(method: string, url: string, token?: string, payload?: unknown): Promise<{ status: number; body: string }> {
  const res = await s.app.inject({ method: method as 'GET', url, headers: token ? { 'x-nomad-token': token } : {}, ...(payload ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.body };
}

before(async () => {
  s = await startServer({ acl: { enabled: true } });
  mgmt = JSON.parse((await call('POST', '/v1/acl/bootstrap')).body) as AclToken;
  assert.equal((await call('POST', '/v1/acl/policy/jobs-only', mgmt.SecretID, { Name: 'jobs-only', Rules: 'namespace "default" { policy = "read" }' })).status, 200);
  jobsOnly = JSON.parse((await call('POST', '/v1/acl/token', mgmt.SecretID, { Name: 'j', Type: 'client', Policies: ['jobs-only'] })).body) as AclToken;
  const node = mockNode();
  await s.server.registerNode(node);
  await placeJob(s.server, serviceJob('web', 3), node);
});
after(async () => {
  await s?.close();
});

test('the topology sums need node:read: none without a token or with a namespace-only one', async () => {
  for (const url of ['/v1/ui/topology', '/v1/ui/topology/nodes']) {
    assert.equal((await call('GET', url)).status, 403, url);
    assert.equal((await call('GET', url, jobsOnly.SecretID)).status, 403, url);
    assert.equal((await call('GET', url, mgmt.SecretID)).status, 200, url);
  }
});

test('malformed paging tokens and filters are refused naming them; a huge per_page answers what exists', async () => {
  for (const url of ['/v1/allocations', '/v1/evaluations', '/v1/deployments', '/v1/jobs', '/v1/ui/topology/nodes', '/v1/job/web/allocations']) {
    const badFilter = await call('GET', `${url}?filter=${encodeURIComponent('ID == (((')}`, mgmt.SecretID);
    assert.equal(badFilter.status, 400, `${url} filter: ${badFilter.body}`);
    const huge = await call('GET', `${url}?per_page=1000000000`, mgmt.SecretID);
    assert.equal(huge.status, 200, `${url} per_page: ${huge.body}`);
  }
  for (const url of ['/v1/allocations', '/v1/evaluations', '/v1/deployments']) {
    const bad = await call('GET', `${url}?per_page=1&next_token=${encodeURIComponent('../../etc\u0000x')}`, mgmt.SecretID);
    assert.equal(bad.status, 400, `${url}: ${bad.body}`);
    assert.match(bad.body, /next_token/);
  }
});

test("a job's allocation list: paged and filtered on the stored allocation, it answers stubs only, and only within the token's namespace", async () => {
  // A filter on a field only the stored allocation holds (its Job) selects, but the answer is stubs: no Job leaks out.
  const byJob = await call('GET', `/v1/job/web/allocations?per_page=2&filter=${encodeURIComponent('Job.ID == "web"')}`, jobsOnly.SecretID);
  assert.equal(byJob.status, 200, byJob.body);
  const page = JSON.parse(byJob.body) as Record<string, unknown>[];
  assert.equal(page.length, 2);
  assert.ok(page.every((a) => a['Job'] === undefined), 'stubs, not the stored allocations');
  // A next_token of any bytes is a position in the ID order, never a path or a crash.
  const odd = await call('GET', `/v1/job/web/allocations?per_page=1&next_token=${encodeURIComponent('../../etc\u0000x')}`, jobsOnly.SecretID);
  assert.equal(odd.status, 200, odd.body);
  // Another namespace, with or without a filter: refused, nothing answered.
  for (const q of ['', `&filter=${encodeURIComponent('Job.ID == "web"')}`]) {
    const other = await call('GET', `/v1/job/web/allocations?namespace=other${q}`, jobsOnly.SecretID);
    assert.equal(other.status, 403, other.body);
  }
  assert.equal((await call('GET', '/v1/job/web/allocations')).status, 403);
});
