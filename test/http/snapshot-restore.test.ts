/**
 * PUT /v1/operator/snapshot through the HTTP layer of a real server with ACLs on (inject): only
 * a management token restores (anonymous and client tokens get 403 and change nothing), the ACL
 * tables come back as saved, and a one-object blocking query on an object the restore took back
 * to an older index is answered at once at the restore's index, never left waiting on an index
 * the state will not reach again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AclToken } from '../../src/structs/acl.js';
import { serviceJob, startServer, type ServerUnderTest } from './real-server.js';

let sut: ServerUnderTest;
let mgmt: AclToken;
before(async () => {
  sut = await startServer({ acl: { enabled: true } });
  mgmt = (await sut.app.inject({ method: 'POST', url: '/v1/acl/bootstrap' })).json<AclToken>();
});
after(() => sut.close());

const call = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, o: { token?: string; payload?: unknown } = {}) =>
  sut.app.inject({ method, url, ...(o.payload === undefined ? {} : { payload: o.payload as object }), headers: o.token ? { 'x-nomad-token': o.token } : {} });

const restore = (file: Buffer, token?: string) =>
  sut.app.inject({ method: 'PUT', url: '/v1/operator/snapshot', payload: file, headers: { 'content-type': 'application/octet-stream', ...(token ? { 'x-nomad-token': token } : {}) } });

const policies = async (): Promise<string[]> => (await call('GET', '/v1/acl/policies', { token: mgmt.SecretID })).json<{ Name: string }[]>().map((p) => p.Name).sort();

test('restore: management tokens only; ACL tables restored; one-object blocking queries answer at the restore index', async () => {
  const t = mgmt.SecretID;
  assert.equal((await call('POST', '/v1/acl/policy/saved', { token: t, payload: { Name: 'saved', Rules: 'namespace "default" { policy = "read" }' } })).statusCode, 200);
  const reader = (await call('POST', '/v1/acl/token', { token: t, payload: { Name: 'reader', Type: 'client', Policies: ['saved'] } })).json<AclToken>();
  assert.equal((await call('PUT', '/v1/jobs', { token: t, payload: { Job: serviceJob('blocked-on') } })).statusCode, 200);

  const saved = await call('GET', '/v1/operator/snapshot', { token: t });
  assert.equal(saved.statusCode, 200);
  const file = saved.rawPayload;
  assert.equal((await call('GET', '/v1/operator/snapshot', { token: reader.SecretID })).statusCode, 403);

  // Changes: another policy, the saved one deleted, the job updated (its index moves up).
  assert.equal((await call('POST', '/v1/acl/policy/later', { token: t, payload: { Name: 'later', Rules: 'namespace "default" { policy = "read" }' } })).statusCode, 200);
  assert.equal((await call('DELETE', '/v1/acl/policy/saved', { token: t })).statusCode, 200);
  assert.equal((await call('PUT', '/v1/jobs', { token: t, payload: { Job: { ...serviceJob('blocked-on'), Meta: { v: '2' } } } })).statusCode, 200);
  const updated = await call('GET', '/v1/job/blocked-on', { token: t });
  const updatedIndex = Number(updated.headers['x-nomad-index']);
  assert.deepEqual(await policies(), ['later']);

  // Only a management token restores; the others change nothing.
  assert.equal((await restore(file)).statusCode, 403);
  assert.equal((await restore(file, reader.SecretID)).statusCode, 403);
  assert.deepEqual(await policies(), ['later']);

  const restored = await restore(file, t);
  assert.equal(restored.statusCode, 200, restored.body);
  const restoreIndex = restored.json<{ Index: number }>().Index;
  assert.ok(restoreIndex > updatedIndex);
  assert.deepEqual(await policies(), ['saved'], 'the ACL policies are the saved ones');
  assert.equal((await call('GET', '/v1/acl/token/self', { token: reader.SecretID })).statusCode, 200, 'the saved token is back');

  // The job is back at its saved (lower) ModifyIndex; a watcher blocked at the updated index is
  // answered now, at the restore's index (its wait here is long enough to fail the test's limit).
  const job = (await call('GET', '/v1/job/blocked-on', { token: t })).json<{ ModifyIndex: number; Meta: Record<string, string> | null }>();
  assert.ok(job.ModifyIndex < updatedIndex);
  assert.equal(job.Meta?.['v'], undefined, 'the saved version of the job');
  const watched = await call('GET', `/v1/job/blocked-on?index=${updatedIndex}&wait=10m`, { token: t });
  assert.equal(watched.statusCode, 200);
  assert.equal(Number(watched.headers['x-nomad-index']), restoreIndex);
  const list = await call('GET', `/v1/jobs?index=${updatedIndex}&wait=10m`, { token: t });
  assert.equal(Number(list.headers['x-nomad-index']), restoreIndex, 'a table query is answered at the restore index');
});
