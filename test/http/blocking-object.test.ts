/**
 * Blocking queries on one object, against the real server: they wait for that object (a change
 * to another job does not wake them) and answer its ModifyIndex, as Nomad does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/http/http-server.js';
import { Table } from '../../src/server/state/state-reader.js';
import { Server } from '../../src/server/server.js';
import type { Job } from '../../src/structs/index.js';
import { mockJob } from '../mock/factories.js';

let dir: string;
let server: Server;
let app: FastifyInstance;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'caravan-blocking-object-'));
  // No scheduler workers: nothing but these tests' writes changes the jobs.
  server = await Server.open({ dataDir: dir, numWorkers: 0 });
  app = createHttpServer({ server, random: () => 0 });
});

after(async () => {
  await app.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function register(id: string, meta: Record<string, string>): Promise<void> {
  const res = await app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: mockJob({ ID: id, Name: id, Meta: meta }) } });
  assert.equal(res.statusCode, 200, res.body);
}

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

test("a blocking GET /v1/job/:id is not woken by another job's change and answers the job's ModifyIndex", async () => {
  await register('a', { v: '1' });
  await register('b', { v: '1' });
  const first = await app.inject({ url: '/v1/job/a' });
  const aIndex = first.json<Job>().ModifyIndex;
  assert.equal(Number(first.headers['x-nomad-index']), aIndex, "the index is the job's, not the table's");
  assert.ok(server.state.tableIndex(Table.Jobs) > aIndex);

  let settled = false;
  const pending = app.inject({ url: `/v1/job/a?index=${aIndex}&wait=5m` }).then((r) => {
    settled = true;
    return r;
  });
  await turns(5);
  const before = server.state.tableIndex(Table.Jobs);
  await register('b', { v: '2' });
  await turns(20);
  assert.ok(server.state.tableIndex(Table.Jobs) > before, 'job b changed the jobs table');
  assert.equal(settled, false, 'a change to job b woke the query on job a');

  await register('a', { v: '2' });
  const res = await pending;
  assert.equal(res.statusCode, 200);
  const a = res.json<Job>();
  assert.equal(a.Meta?.['v'], '2');
  assert.ok(a.ModifyIndex > aIndex);
  assert.equal(Number(res.headers['x-nomad-index']), a.ModifyIndex);
});

test('a blocking query on one object whose wait runs out answers the same object index', async () => {
  const a = (await app.inject({ url: '/v1/job/a' })).json<Job>();
  await register('b', { v: '3' });
  const res = await app.inject({ url: `/v1/job/a?index=${a.ModifyIndex}&wait=30ms` });
  assert.equal(res.statusCode, 200);
  assert.equal(Number(res.headers['x-nomad-index']), a.ModifyIndex);
});

test('a blocking query on a job that is deleted meanwhile answers 404', async () => {
  await register('c', { v: '1' });
  const c = (await app.inject({ url: '/v1/job/c' })).json<Job>();
  const pending = app.inject({ url: `/v1/job/c?index=${c.ModifyIndex}&wait=5m` });
  await turns(5);
  const del = await app.inject({ method: 'DELETE', url: '/v1/job/c?purge=true' });
  assert.equal(del.statusCode, 200, del.body);
  const res = await pending;
  assert.equal(res.statusCode, 404);
  assert.ok(Number(res.headers['x-nomad-index']) > c.ModifyIndex);
});
