/**
 * ACLs through the HTTP layer of a real server (inject): bootstrap and its reset index,
 * policies, tokens and roles, and the gate's decisions for the anonymous, a namespace-read
 * and a management token.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import { mockNode } from '../mock/factories.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from './real-server.js';

let sut: ServerUnderTest;
let mgmt: AclToken;
before(async () => {
  sut = await startServer({ acl: { enabled: true } });
});
after(() => sut.close());

type Opts = { token?: string; payload?: unknown };
const call = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, o: Opts = {}) =>
  sut.app.inject({ method, url, ...(o.payload === undefined ? {} : { payload: o.payload as object }), headers: o.token ? { 'x-nomad-token': o.token } : {} });

test('bootstrap answers a management token once; the reset file allows it again', async () => {
  const first = await call('POST', '/v1/acl/bootstrap');
  assert.equal(first.statusCode, 200, first.body);
  mgmt = first.json<AclToken>();
  assert.equal(mgmt.Type, 'management');
  assert.match(mgmt.SecretID, /^[0-9a-f-]{36}$/);
  const again = await call('POST', '/v1/acl/bootstrap');
  assert.equal(again.statusCode, 400);
  assert.equal(again.body, `ACL bootstrap already done (reset index: ${mgmt.CreateIndex})`);
  writeFileSync(join(sut.server.config.dataDir, 'acl-bootstrap-reset'), String(mgmt.CreateIndex));
  const reset = await call('POST', '/v1/acl/bootstrap');
  assert.equal(reset.statusCode, 200, reset.body);
  mgmt = reset.json<AclToken>();
  const self = await call('GET', '/v1/acl/token/self', { token: mgmt.SecretID });
  assert.equal(self.json<AclToken>().AccessorID, mgmt.AccessorID);
});

test('policies: malformed rules are a 400 naming the rule and line; anonymous may not write them', async () => {
  const bad = await call('POST', '/v1/acl/policy/bad', { token: mgmt.SecretID, payload: { Name: 'bad', Rules: 'namespace "default" {\n  capabilities = ["fly"]\n}' } });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /namespace "default": unknown capability "fly" \(line 2\)/);
  const anon = await call('POST', '/v1/acl/policy/x', { payload: { Rules: 'node { policy = "read" }' } });
  assert.equal(anon.statusCode, 403);
  assert.equal(anon.body, 'Permission denied');
  const ok = await call('POST', '/v1/acl/policy/default-read', { token: mgmt.SecretID, payload: { Name: 'default-read', Description: 'read default', Rules: 'namespace "default" { policy = "read" }' } });
  assert.equal(ok.statusCode, 200, ok.body);
  const list = await call('GET', '/v1/acl/policies', { token: mgmt.SecretID });
  assert.deepEqual(list.json<{ Name: string }[]>().map((p) => p.Name), ['default-read']);
  // Nomad answers the parsed rules beside the text (its web UI reads RulesJSON), capabilities expanded.
  const one = await call('GET', '/v1/acl/policy/default-read', { token: mgmt.SecretID });
  const rulesJson = one.json<{ RulesJSON: { Namespaces: { Name: string; Capabilities: string[] }[]; Node: unknown } }>().RulesJSON;
  assert.equal(rulesJson.Namespaces[0]?.Name, 'default');
  assert.ok(rulesJson.Namespaces[0]?.Capabilities.includes('read-job'));
  assert.ok(!rulesJson.Namespaces[0]?.Capabilities.includes('submit-job'));
  assert.equal(rulesJson.Node, null);
});

test('the gate: anonymous is refused, a read token reads but cannot write, management does everything', async () => {
  const { node } = await placeJob(sut.server, serviceJob('web', 1), mockNode());
  await sut.server.upsertNamespace({ Name: 'other' });
  await sut.server.registerJob(serviceJob('hidden', 1, { Namespace: 'other' }));
  const created = await call('POST', '/v1/acl/token', { token: mgmt.SecretID, payload: { Name: 'reader', Type: 'client', Policies: ['default-read'] } });
  assert.equal(created.statusCode, 200, created.body);
  const reader = created.json<AclToken>();
  assert.match(reader.SecretID, /^[0-9a-f-]{36}$/);

  const job = { Job: serviceJob('new', 1) };
  assert.equal((await call('PUT', '/v1/jobs', { payload: job })).statusCode, 403, 'anonymous registers nothing');
  assert.equal((await call('GET', '/v1/jobs')).statusCode, 403, 'anonymous lists nothing');
  assert.equal((await call('GET', '/v1/acl/token/self', { token: 'no-such-secret' })).body, 'ACL token not found');

  const jobs = await call('GET', '/v1/jobs', { token: reader.SecretID });
  assert.deepEqual(jobs.json<{ ID: string }[]>().map((j) => j.ID), ['web']);
  const all = await call('GET', '/v1/jobs?namespace=*', { token: reader.SecretID });
  assert.deepEqual(all.json<{ ID: string }[]>().map((j) => j.ID), ['web'], '* keeps the namespaces the token may read');
  assert.equal((await call('GET', '/v1/job/hidden?namespace=other', { token: reader.SecretID })).statusCode, 403);
  assert.equal((await call('PUT', '/v1/jobs', { token: reader.SecretID, payload: job })).statusCode, 403);
  assert.equal((await call('GET', '/v1/nodes', { token: reader.SecretID })).statusCode, 403);
  const allocs = await call('GET', '/v1/allocations', { token: reader.SecretID });
  assert.ok(allocs.json<{ Namespace: string }[]>().every((a) => a.Namespace === 'default'));
  const search = await call('POST', '/v1/search', { token: reader.SecretID, payload: { Prefix: 'hid', Context: 'jobs' } });
  assert.deepEqual(search.json<{ Matches: { jobs: string[] } }>().Matches.jobs, []);
  const searchOther = await call('POST', '/v1/search?namespace=other', { token: reader.SecretID, payload: { Prefix: 'hid', Context: 'jobs' } });
  assert.deepEqual(searchOther.json<{ Matches: { jobs: string[] } }>().Matches.jobs, [], 'another namespace\'s search results stay hidden');

  assert.equal((await call('PUT', '/v1/jobs', { token: mgmt.SecretID, payload: job })).statusCode, 200);
  assert.equal((await call('GET', '/v1/nodes', { token: mgmt.SecretID })).statusCode, 200);
  const nodeRead = await call('GET', `/v1/node/${node.ID}`, { token: mgmt.SecretID });
  assert.equal(nodeRead.json<{ SecretID: string }>().SecretID, '', 'no node secret in answers');

  // A client reads its own node's allocations with its SecretID, not another node's.
  assert.equal((await call('GET', `/v1/node/${node.ID}/allocations`, { token: node.SecretID })).statusCode, 200);
  const other = mockNode();
  await sut.server.registerNode(other);
  assert.equal((await call('GET', `/v1/node/${node.ID}/allocations`, { token: other.SecretID })).statusCode, 403);

  const tokens = await call('GET', '/v1/acl/tokens', { token: mgmt.SecretID });
  assert.ok(tokens.json<Record<string, unknown>[]>().every((t) => !('SecretID' in t)), 'no secret in the token list');
  const own = await call('GET', `/v1/acl/token/${reader.AccessorID}`, { token: reader.SecretID });
  assert.equal(own.json<AclToken>().SecretID, reader.SecretID);
  assert.equal((await call('GET', `/v1/acl/token/${mgmt.AccessorID}`, { token: reader.SecretID })).statusCode, 403);
});

test('expired tokens are refused; roles grant their policies; the anonymous policy applies without a token', async () => {
  const role = await call('POST', '/v1/acl/role', { token: mgmt.SecretID, payload: { Name: 'readers', Policies: [{ Name: 'default-read' }] } });
  assert.equal(role.statusCode, 200, role.body);
  const viaRole = (await call('POST', '/v1/acl/token', { token: mgmt.SecretID, payload: { Type: 'client', Roles: [{ Name: 'readers' }] } })).json<AclToken>();
  assert.equal((await call('GET', '/v1/jobs', { token: viaRole.SecretID })).statusCode, 200);
  assert.equal(viaRole.Roles?.[0]?.Name, 'readers');

  const short = (await call('POST', '/v1/acl/token', { token: mgmt.SecretID, payload: { Type: 'client', Policies: ['default-read'], ExpirationTTL: 50_000_000 } })).json<AclToken>();
  assert.ok(short.ExpirationTime);
  await new Promise((r) => setTimeout(r, 120));
  const expired = await call('GET', '/v1/jobs', { token: short.SecretID });
  assert.equal(expired.statusCode, 403);
  assert.equal(expired.body, 'ACL token expired');

  assert.equal((await call('GET', '/v1/jobs')).statusCode, 403);
  await call('POST', '/v1/acl/policy/anonymous', { token: mgmt.SecretID, payload: { Rules: 'namespace "default" { policy = "read" }' } });
  assert.equal((await call('GET', '/v1/jobs')).statusCode, 200, 'the anonymous policy lets anonymous list');
  assert.equal((await call('PUT', '/v1/jobs', { payload: { Job: serviceJob('anon', 1) } })).statusCode, 403);
  await call('DELETE', '/v1/acl/policy/anonymous', { token: mgmt.SecretID });
});
