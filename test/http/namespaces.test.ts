/**
 * Namespaces as objects of the replicated state, through the HTTP API of a real server: create,
 * update, read, list, delete (refused for default and while a job is live), jobs refused in a
 * namespace that does not exist or whose capabilities refuse their driver, lists scoped by
 * `?namespace=` (`*` for all), and namespaces kept across a restart from the log and from a snapshot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/http/http-server.js';
import { Server } from '../../src/server/server.js';
import type { Namespace } from '../../src/structs/namespace.js';
import { mockJob } from '../mock/factories.js';

async function open(dir: string): Promise<{ server: Server; app: FastifyInstance; close: () => Promise<void> }> {
  const server = await Server.open({ dataDir: dir, numWorkers: 0 });
  const app = createHttpServer({ server });
  return {
    server,
    app,
    close: async () => {
      await app.close();
      await server.close();
    },
  };
}

test('namespaces: create, update, read, list, scoped lists, delete rules, and restart from log and snapshot', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-ns-'));
  let s = await open(dir);
  try {
    const put = (path: string, body: unknown) => s.app.inject({ method: 'PUT', url: path, payload: JSON.stringify(body) });
    const get = (path: string) => s.app.inject({ url: path });

    // Create with Nomad's fields; the body's Name may be left out (the path names it).
    const created = await put('/v1/namespace/prod', { Description: 'production', Meta: { owner: 'ops' }, Capabilities: { DisabledTaskDrivers: ['docker'] } });
    assert.equal(created.statusCode, 200, created.body);
    const idx = Number(created.headers['x-nomad-index']);
    assert.ok(idx > 0);
    const prod = get('/v1/namespace/prod');
    const ns = (await prod).json<Namespace>();
    assert.equal(ns.Name, 'prod');
    assert.equal(ns.Description, 'production');
    assert.deepEqual(ns.Meta, { owner: 'ops' });
    assert.deepEqual(ns.Capabilities?.DisabledTaskDrivers, ['docker']);
    assert.equal(ns.CreateIndex, idx);

    // An update replaces the whole namespace (as Nomad's) and keeps CreateIndex; POST works as PUT.
    const upd = await s.app.inject({ method: 'POST', url: '/v1/namespace/prod', payload: JSON.stringify({ Name: 'prod', Description: 'live', Capabilities: { DisabledTaskDrivers: ['docker'] } }) });
    assert.equal(upd.statusCode, 200, upd.body);
    const after = (await get('/v1/namespace/prod')).json<Namespace>();
    assert.equal(after.Description, 'live');
    assert.equal(after.Meta, null);
    assert.equal(after.CreateIndex, idx);
    assert.ok(after.ModifyIndex > idx);
    assert.deepEqual((await get('/v1/namespaces')).json<Namespace[]>().map((n) => n.Name), ['default', 'prod']);
    assert.deepEqual((await get('/v1/namespaces?prefix=pr')).json<Namespace[]>().map((n) => n.Name), ['prod']);
    assert.equal((await get('/v1/namespace/nope')).statusCode, 404);

    // Bad input: a 400 naming the field, nothing stored.
    for (const [path, body, want] of [
      ['/v1/namespace/prod', { Name: 'other' }, /Name: Namespace name does not match request path/],
      ['/v1/namespace/bad%20name', {}, /Name: invalid name "bad name"/],
      ['/v1/namespace/x', { Meta: { n: 1 } }, /Meta\.n: must be a string/],
      ['/v1/namespace/x', { Capabilities: { EnabledTaskDrivers: 'exec' } }, /Capabilities\.EnabledTaskDrivers: must be a list of strings/],
      ['/v1/namespace/x', [], /must be a JSON object|must be an object/],
    ] as const) {
      const res = await put(path, body);
      assert.equal(res.statusCode, 400, `${path} ${JSON.stringify(body)}: ${res.body}`);
      assert.match(res.body, want);
    }
    assert.equal((await get('/v1/namespace/x')).statusCode, 404);

    // Jobs: refused in a namespace that does not exist, and when the capabilities refuse a driver.
    const job = (id: string, namespace: string, driver = 'mock_driver') => {
      const j = mockJob({ ID: id, Name: id, Namespace: namespace });
      j.TaskGroups[0]!.Tasks[0]!.Driver = driver;
      return { Job: j };
    };
    const missing = await put('/v1/jobs', job('web', 'staging'));
    assert.equal(missing.statusCode, 400);
    assert.match(missing.body, /job "web" is in nonexistent namespace "staging"/);
    const refused = await put('/v1/jobs', job('web', 'prod', 'docker'));
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /used task driver "docker" is disabled in namespace "prod"/);
    assert.equal((await put('/v1/jobs', job('web', 'prod'))).statusCode, 200);
    assert.equal((await put('/v1/jobs', job('api', 'default'))).statusCode, 200);

    // Lists are scoped by ?namespace= (default "default"), "*" for all.
    const ids = async (path: string) => (await get(path)).json<{ ID?: string; JobID?: string }[]>().map((x) => x.JobID ?? x.ID).sort();
    assert.deepEqual(await ids('/v1/jobs'), ['api']);
    assert.deepEqual(await ids('/v1/jobs?namespace=prod'), ['web']);
    assert.deepEqual(await ids('/v1/jobs?namespace=*'), ['api', 'web']);
    assert.deepEqual(await ids('/v1/evaluations?namespace=prod'), ['web']);
    assert.deepEqual(await ids('/v1/evaluations'), ['api']);
    assert.deepEqual(await ids('/v1/evaluations?namespace=*'), ['api', 'web']);

    // Delete: default never; prod not while its job is live; then yes.
    const delDefault = await s.app.inject({ method: 'DELETE', url: '/v1/namespace/default' });
    assert.equal(delDefault.statusCode, 400);
    assert.match(delDefault.body, /can not delete default namespace/);
    const inUse = await s.app.inject({ method: 'DELETE', url: '/v1/namespace/prod' });
    assert.equal(inUse.statusCode, 400);
    assert.match(inUse.body, /namespace "prod" has non-terminal jobs in regions: \[global\]/);
    assert.equal((await s.app.inject({ method: 'DELETE', url: '/v1/namespace/nope' })).statusCode, 404);

    // Kept across a restart: from the log, then from a snapshot.
    await put('/v1/namespace/staging', { Description: 'pre-prod' });
    await s.close();
    s = await open(dir);
    assert.equal((await get('/v1/namespace/staging')).json<Namespace>().Description, 'pre-prod');
    await s.server.snapshotNow();
    await s.close();
    s = await open(dir);
    assert.deepEqual((await get('/v1/namespaces')).json<Namespace[]>().map((n) => n.Name), ['default', 'prod', 'staging']);
    assert.equal((await get('/v1/namespace/prod')).json<Namespace>().CreateIndex, idx);

    assert.equal((await s.app.inject({ method: 'DELETE', url: '/v1/job/web?namespace=prod&purge=true' })).statusCode, 200);
    const del = await s.app.inject({ method: 'DELETE', url: '/v1/namespace/prod' });
    assert.equal(del.statusCode, 200, del.body);
    assert.equal((await get('/v1/namespace/prod')).statusCode, 404);
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
