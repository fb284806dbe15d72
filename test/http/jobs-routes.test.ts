import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpServer } from '../../src/http/http-server.js';
import { JobDecodeError, type JobAdmission } from '../../src/http/job-admission.js';
import { splitJobPath } from '../../src/http/routes/jobs.js';
import type { Job } from '../../src/structs/index.js';
import { FakeServerApi, mockAlloc, mockJob } from './fake-server-api.js';

const admission: JobAdmission = {
  parseHcl: async (hcl) => {
    const m = /job\s+"([^"]+)"/.exec(hcl);
    if (!m) throw new JobDecodeError(['parse error: no job block']);
    return mockJob({ ID: m[1]!, Name: m[1]! });
  },
  canonicalize: (raw) => {
    const job = raw as unknown as Job;
    return { ...job, Priority: job.Priority || 50, Datacenters: job.Datacenters ?? ['dc1'] };
  },
  validate: (job) => {
    const problems: string[] = [];
    if (!job.ID) problems.push('Missing job ID');
    if (!Array.isArray(job.TaskGroups) || job.TaskGroups.length === 0) problems.push('Missing job task groups');
    return problems;
  },
};

const group = { Name: 'web', Count: 2, Tasks: [] };

function setup() {
  const server = new FakeServerApi();
  const app = createHttpServer({ server, admission });
  return { server, app };
}

test('splitJobPath separates the job ID from the sub-resource, IDs may contain slashes', () => {
  const rows = [
    { name: 'plain', tail: 'web', want: { jobId: 'web', sub: '' } },
    { name: 'allocations', tail: 'web/allocations', want: { jobId: 'web', sub: 'allocations' } },
    { name: 'deployment vs deployments', tail: 'web/deployments', want: { jobId: 'web', sub: 'deployments' } },
    { name: 'child id', tail: 'batch/periodic-1700000000/summary', want: { jobId: 'batch/periodic-1700000000', sub: 'summary' } },
  ];
  for (const r of rows) assert.deepEqual(splitJobPath(r.tail), r.want, r.name);
});

test('PUT /v1/jobs registers a canonicalized job and answers the eval', async () => {
  const { server, app } = setup();
  const res = await app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'web', Name: 'web', TaskGroups: [group] } } });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.match(String(body['EvalID']), /^eeeeeeee-/);
  assert.equal(typeof body['JobModifyIndex'], 'number');
  assert.equal(res.headers['x-nomad-index'], String(body['Index']));
  const registered = server.calls.find((c) => c.method === 'registerJob')!.args[0] as Job;
  assert.equal(registered.Priority, 50, 'canonicalized');
  assert.equal(registered.Namespace, 'default', 'namespace filled');
});

test('register with an invalid job is a 400 listing every problem and changes nothing', async () => {
  const { server, app } = setup();
  const res = await app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { Name: 'x' } } });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /2 errors occurred/);
  assert.match(res.body, /Missing job ID/);
  assert.match(res.body, /Missing job task groups/);
  assert.equal(server.calls.length, 0);
});

test('register without Job, with the wrong ID, or with a bad EnforceIndex type is a 400 naming the field', async () => {
  const { app } = setup();
  const rows = [
    { name: 'no Job', url: '/v1/jobs', payload: { Foo: 1 }, want: /Job must be specified/ },
    { name: 'Job not an object', url: '/v1/jobs', payload: { Job: 'x' }, want: /Job must be a JSON object/ },
    { name: 'ID mismatch', url: '/v1/job/other', payload: { Job: { ID: 'web', TaskGroups: [group] } }, want: /Job ID does not match/ },
    { name: 'EnforceIndex type', url: '/v1/jobs', payload: { Job: { ID: 'web', TaskGroups: [group] }, EnforceIndex: 'yes' }, want: /EnforceIndex/ },
    { name: 'body an array', url: '/v1/jobs', payload: [1, 2], want: /request body must be a JSON object/ },
  ];
  for (const r of rows) {
    const res = await app.inject({ method: 'POST', url: r.url, payload: r.payload });
    assert.equal(res.statusCode, 400, r.name);
    assert.match(res.body, r.want, r.name);
  }
});

test('EnforceIndex conflicts from the server map to their status', async () => {
  const { app } = setup();
  await app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'web', TaskGroups: [group] } } });
  const res = await app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'web', TaskGroups: [group] }, EnforceIndex: true, JobModifyIndex: 1 } });
  assert.equal(res.statusCode, 409);
  assert.match(res.body, /conflicting job modify index/);
});

test('GET /v1/jobs lists stubs with summaries, filtered by prefix', async () => {
  const { server, app } = setup();
  server.putJob(mockJob({ ID: 'web' }));
  server.putJob(mockJob({ ID: 'batch' }));
  const res = await app.inject({ method: 'GET', url: '/v1/jobs?prefix=we' });
  assert.equal(res.statusCode, 200);
  const list = res.json() as Record<string, unknown>[];
  assert.equal(list.length, 1);
  assert.equal(list[0]!['ID'], 'web');
  assert.equal((list[0]!['JobSummary'] as Record<string, unknown>)['JobID'], 'web');
  assert.equal(res.headers['x-nomad-knownleader'], 'true');
  assert.equal(res.headers['x-nomad-lastcontact'], '0');
  assert.ok(Number(res.headers['x-nomad-index']) >= 1);
});

test('GET /v1/job/:id and its sub-resources; 404 for an unknown job', async () => {
  const { server, app } = setup();
  server.putJob(mockJob({ ID: 'web' }));
  server.putJob(mockJob({ ID: 'web', Meta: { v: '2' } }));
  server.putAlloc(mockAlloc({ JobID: 'web' }));
  assert.equal((await app.inject({ url: '/v1/job/web' })).json<Job>().Version, 1);
  const versions = (await app.inject({ url: '/v1/job/web/versions' })).json<{ Versions: Job[] }>();
  assert.deepEqual(versions.Versions.map((v) => v.Version), [1, 0]);
  const allocs = (await app.inject({ url: '/v1/job/web/allocations' })).json<{ JobID: string }[]>();
  assert.equal(allocs.length, 1);
  assert.equal((await app.inject({ url: '/v1/job/web/summary' })).statusCode, 200);
  assert.equal((await app.inject({ url: '/v1/job/web/deployment' })).body, 'null');
  assert.deepEqual((await app.inject({ url: '/v1/job/web/deployments' })).json(), []);
  const missing = await app.inject({ url: '/v1/job/nope' });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.body, 'job not found');
  assert.ok(missing.headers['x-nomad-index']);
});

test('DELETE /v1/job/:id stops or purges', async () => {
  const { server, app } = setup();
  server.putJob(mockJob({ ID: 'web' }));
  const res = await app.inject({ method: 'DELETE', url: '/v1/job/web?purge=true' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(server.calls.at(-1), { method: 'deregisterJob', args: ['default', 'web', true] });
  assert.equal((await app.inject({ method: 'DELETE', url: '/v1/job/web' })).statusCode, 404);
  server.putJob(mockJob({ ID: 'api' }));
  assert.equal((await app.inject({ method: 'DELETE', url: '/v1/job/api?purge=maybe' })).statusCode, 400);
});

test('POST /v1/job/:id/plan answers annotations and the diff type', async () => {
  const { app } = setup();
  const res = await app.inject({ method: 'POST', url: '/v1/job/web/plan', payload: { Job: { ID: 'web', TaskGroups: [group] }, Diff: true } });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { Annotations: { DesiredTGUpdates: Record<string, { Place: number }> }; Diff: { Type: string } };
  assert.equal(body.Annotations.DesiredTGUpdates['web']!.Place, 2);
  assert.equal(body.Diff.Type, 'Added');
});

test('POST /v1/job/:id/evaluate creates an eval', async () => {
  const { server, app } = setup();
  server.putJob(mockJob({ ID: 'web' }));
  const res = await app.inject({ method: 'POST', url: '/v1/job/web/evaluate' });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(res.json<{ EvalID: string }>().EvalID, /^eeeeeeee-/);
});

test('POST /v1/jobs/parse parses HCL, 400 on a parse error', async () => {
  const { app } = setup();
  const ok = await app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: 'job "hello" {}', Canonicalize: true } });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json<Job>().ID, 'hello');
  const bad = await app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: 'nothing' } });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /no job block/);
  const missing = await app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: {} });
  assert.equal(missing.statusCode, 400);
  assert.match(missing.body, /JobHCL/);
});
