import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Server } from '../../src/server/server.js';
import { Table } from '../../src/server/state/state-reader.js';
import { createHttpServer } from '../../src/http/http-server.js';
import type { AllocListStub, Deployment } from '../../src/structs/index.js';
import { mockJob, mockNode } from '../mock/factories.js';

const S = 1_000_000_000;
let dir = '';
let server: Server;
let app: FastifyInstance;
let deploymentId = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'caravan-deploy-routes-'));
  server = await Server.open({ dataDir: dir, numWorkers: 1 });
  app = createHttpServer({ server, agent: { name: 'srv1', region: 'global' } });
  await server.registerNode(mockNode());
  const base = mockJob({ ID: 'web' });
  const update = { Stagger: 0, MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: S, HealthyDeadline: 30 * S, ProgressDeadline: 600 * S, Canary: 1, AutoRevert: false, AutoPromote: false };
  const reg = await server.registerJob({ ...base, TaskGroups: [{ ...base.TaskGroups[0]!, Count: 2, Update: update }] });
  for (let i = 0; i < 200 && server.state.evalById(reg.evalId)?.Status !== 'complete'; i++) {
    await server.waitForChange([Table.Evals], server.state.latestIndex(), 50);
  }
  deploymentId = server.state.deploymentsByJob('default', 'web')[0]!.ID;
});

after(async () => {
  await app.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

test('GET /v1/deployments, /v1/deployment/:id and its allocations', async () => {
  const list = await app.inject({ method: 'GET', url: '/v1/deployments' });
  assert.equal(list.statusCode, 200);
  const ds = list.json() as Deployment[];
  assert.equal(ds.length, 1);
  assert.equal(ds[0]!.Status, 'running');
  assert.ok(Number(list.headers['x-nomad-index']) > 0);
  const one = await app.inject({ method: 'GET', url: `/v1/deployment/${deploymentId}` });
  assert.equal((one.json() as Deployment).TaskGroups.web?.DesiredTotal, 2);
  assert.equal((one.json() as Deployment).TaskGroups.web?.PlacedAllocs, 2);
  const allocs = await app.inject({ method: 'GET', url: `/v1/deployment/allocations/${deploymentId}` });
  assert.equal((allocs.json() as AllocListStub[]).length, 2);
  const missing = await app.inject({ method: 'GET', url: '/v1/deployment/nope' });
  assert.equal(missing.statusCode, 404);
});

test('promote needs something to promote; pause, resume and fail answer the update response', async () => {
  const bad = await app.inject({ method: 'POST', url: `/v1/deployment/promote/${deploymentId}`, payload: {} });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /All or Groups/);
  const none = await app.inject({ method: 'POST', url: `/v1/deployment/promote/${deploymentId}`, payload: { All: true } });
  assert.equal(none.statusCode, 400, 'a first version has no canaries');
  assert.match(none.body, /no canaries to promote/);

  const pause = await app.inject({ method: 'PUT', url: `/v1/deployment/pause/${deploymentId}`, payload: { Pause: true } });
  assert.equal(pause.statusCode, 200, pause.body);
  assert.equal(server.state.deploymentById(deploymentId)!.Status, 'paused');
  const resume = await app.inject({ method: 'PUT', url: `/v1/deployment/pause/${deploymentId}`, payload: { Pause: false } });
  assert.equal(resume.statusCode, 200);
  assert.ok((resume.json() as { EvalID: string }).EvalID, 'resuming creates an eval');
  assert.equal(server.state.deploymentById(deploymentId)!.Status, 'running');

  const fail = await app.inject({ method: 'POST', url: `/v1/deployment/fail/${deploymentId}` });
  assert.equal(fail.statusCode, 200, fail.body);
  assert.equal(server.state.deploymentById(deploymentId)!.Status, 'failed');
  assert.equal(server.state.deploymentById(deploymentId)!.StatusDescription, 'Deployment marked as failed');
  const again = await app.inject({ method: 'POST', url: `/v1/deployment/fail/${deploymentId}` });
  assert.equal(again.statusCode, 400);
  const badGroups = await app.inject({ method: 'POST', url: `/v1/deployment/promote/${deploymentId}`, payload: { Groups: 'web' } });
  assert.equal(badGroups.statusCode, 400);
  assert.match(badGroups.body, /Groups/);
});
