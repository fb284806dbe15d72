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
  for (const url of ['/v1/allocations', '/v1/evaluations', '/v1/deployments', '/v1/jobs', '/v1/ui/topology/nodes']) {
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
