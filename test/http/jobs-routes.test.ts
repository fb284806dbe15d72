import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { splitJobPath } from '../../src/http/routes/jobs.js';
import type { Job } from '../../src/structs/index.js';
import { placeJob, serviceJob, startServer, waitForState, type ServerUnderTest } from './real-server.js';

let sut: ServerUnderTest;

before(async () => {
  sut = await startServer();
});

after(() => sut.close());

/** A group `web` of `count` raw_exec tasks, as API JSON with only what a user would write. */
function group(count = 2) {
  return { Name: 'web', Count: count, Tasks: [{ Name: 'web', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['60'] } }] };
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
  const res = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'reg', Name: 'reg', Datacenters: ['dc1'], TaskGroups: [group()] } } });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as Record<string, unknown>;
  assert.ok(sut.server.state.evalById(String(body['EvalID'])), 'a real evaluation');
  assert.equal(typeof body['JobModifyIndex'], 'number');
  assert.equal(res.headers['x-nomad-index'], String(body['Index']));
  const registered = sut.server.state.jobById('default', 'reg')!;
  assert.equal(registered.Priority, 50, 'canonicalized');
  assert.equal(registered.Namespace, 'default', 'namespace filled');
  assert.equal(registered.TaskGroups[0]!.RestartPolicy!.Attempts, 2, "Nomad's service restart defaults");
});

test('register with an invalid job is a 400 listing every problem and changes nothing', async () => {
  const res = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { Name: 'x', Priority: 500 } } });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /^Job validation failed: \d+ errors occurred:/);
  assert.match(res.body, /job ID is required/);
  assert.match(res.body, /priority must be between 1 and 100/);
  assert.match(res.body, /no task groups/);
  const badType = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'x', Priority: 'high', TaskGroups: [group()] } } });
  assert.equal(badType.statusCode, 400);
  assert.match(badType.body, /^Job decoding failed: 1 error occurred:\n\t\* job "x": Priority must be a number, got "high"/);
  assert.equal(sut.server.state.jobById('default', 'x'), undefined, 'nothing was written');
  assert.deepEqual(sut.server.state.jobs('default').map((j) => j.ID).filter((id) => id === '' || id === 'x'), []);
});

test('register without Job, with the wrong ID, or with a bad EnforceIndex type is a 400 naming the field', async () => {
  const rows = [
    { name: 'no Job', url: '/v1/jobs', payload: { Foo: 1 }, want: /Job must be specified/ },
    { name: 'Job not an object', url: '/v1/jobs', payload: { Job: 'x' }, want: /Job must be a JSON object/ },
    { name: 'ID mismatch', url: '/v1/job/other', payload: { Job: { ID: 'web', TaskGroups: [group()] } }, want: /Job ID does not match/ },
    { name: 'EnforceIndex type', url: '/v1/jobs', payload: { Job: { ID: 'web', TaskGroups: [group()] }, EnforceIndex: 'yes' }, want: /EnforceIndex/ },
    { name: 'body an array', url: '/v1/jobs', payload: [1, 2], want: /request body must be a JSON object/ },
  ];
  for (const r of rows) {
    const res = await sut.app.inject({ method: 'POST', url: r.url, payload: r.payload });
    assert.equal(res.statusCode, 400, r.name);
    assert.match(res.body, r.want, r.name);
  }
});

test('EnforceIndex conflicts from the server map to their status', async () => {
  const first = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'enf', Datacenters: ['dc1'], TaskGroups: [group()] } } });
  assert.equal(first.statusCode, 200, first.body);
  const res = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'enf', Datacenters: ['dc1'], TaskGroups: [group()] }, EnforceIndex: true, JobModifyIndex: 1 } });
  assert.equal(res.statusCode, 409);
  assert.match(res.body, /conflicting job modify index/);
  const exists = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: { ID: 'enf', Datacenters: ['dc1'], TaskGroups: [group()] }, EnforceIndex: true, JobModifyIndex: 0 } });
  assert.equal(exists.statusCode, 409);
  assert.equal(exists.body, 'Enforcing job modify index 0: job already exists');
});

test('GET /v1/jobs lists stubs with summaries, filtered by prefix', async () => {
  await sut.server.registerJob(serviceJob('listweb'));
  await sut.server.registerJob(serviceJob('listbatch'));
  const res = await sut.app.inject({ method: 'GET', url: '/v1/jobs?prefix=listwe' });
  assert.equal(res.statusCode, 200);
  const list = res.json() as Record<string, unknown>[];
  assert.equal(list.length, 1);
  assert.equal(list[0]!['ID'], 'listweb');
  assert.equal((list[0]!['JobSummary'] as Record<string, unknown>)['JobID'], 'listweb');
  assert.equal(res.headers['x-nomad-knownleader'], 'true');
  assert.equal(res.headers['x-nomad-lastcontact'], '0');
  assert.ok(Number(res.headers['x-nomad-index']) >= 1);
});

test('GET /v1/job/:id and its sub-resources; 404 for an unknown job', async () => {
  await placeJob(sut.server, serviceJob('subres', 1));
  await sut.server.registerJob(serviceJob('subres', 1, { Meta: { v: '2' } }));
  assert.equal((await sut.app.inject({ url: '/v1/job/subres' })).json<Job>().Version, 1);
  const versions = (await sut.app.inject({ url: '/v1/job/subres/versions' })).json<{ Versions: Job[] }>();
  assert.deepEqual(versions.Versions.map((v) => v.Version), [1, 0]);
  const allocs = (await sut.app.inject({ url: '/v1/job/subres/allocations' })).json<{ JobID: string }[]>();
  assert.ok(allocs.length >= 1);
  assert.ok(allocs.every((a) => a.JobID === 'subres'));
  assert.equal((await sut.app.inject({ url: '/v1/job/subres/summary' })).statusCode, 200);
  assert.equal((await sut.app.inject({ url: '/v1/job/subres/deployments' })).statusCode, 200);
  assert.equal((await sut.app.inject({ url: '/v1/job/subres/deployment' })).statusCode, 200);
  const missing = await sut.app.inject({ url: '/v1/job/nope' });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.body, 'job not found');
  assert.ok(missing.headers['x-nomad-index']);
});

test('DELETE /v1/job/:id stops or purges', async () => {
  await sut.server.registerJob(serviceJob('del'));
  const res = await sut.app.inject({ method: 'DELETE', url: '/v1/job/del?purge=true' });
  assert.equal(res.statusCode, 200);
  await waitForState(sut.server, () => sut.server.state.jobById('default', 'del') === undefined, 'purged');
  assert.equal((await sut.app.inject({ method: 'DELETE', url: '/v1/job/del' })).statusCode, 404);
  await sut.server.registerJob(serviceJob('delapi'));
  assert.equal((await sut.app.inject({ method: 'DELETE', url: '/v1/job/delapi?purge=maybe' })).statusCode, 400);
  const stop = await sut.app.inject({ method: 'DELETE', url: '/v1/job/delapi' });
  assert.equal(stop.statusCode, 200);
  assert.equal(sut.server.state.jobById('default', 'delapi')!.Stop, true);
});

test('POST /v1/job/:id/plan answers annotations and the diff type', async () => {
  const res = await sut.app.inject({ method: 'POST', url: '/v1/job/planned/plan', payload: { Job: { ID: 'planned', Datacenters: ['dc1'], TaskGroups: [group()] }, Diff: true } });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as { Annotations: { DesiredTGUpdates: Record<string, { Place: number }> }; Diff: { Type: string; ID: string } };
  assert.equal(body.Annotations.DesiredTGUpdates['web']!.Place, 2);
  assert.equal(body.Diff.Type, 'Added');
  assert.equal(body.Diff.ID, 'planned');
  assert.equal(sut.server.state.jobById('default', 'planned'), undefined, 'a plan registers nothing');
});

test('POST /v1/job/:id/evaluate creates an eval', async () => {
  await sut.server.registerJob(serviceJob('evaljob'));
  const res = await sut.app.inject({ method: 'POST', url: '/v1/job/evaljob/evaluate' });
  assert.equal(res.statusCode, 200, res.body);
  const ev = sut.server.state.evalById(res.json<{ EvalID: string }>().EvalID);
  assert.equal(ev?.JobID, 'evaljob');
});

test('POST /v1/jobs/parse parses HCL, 400 on a parse error', async () => {
  const hcl = 'job "hello" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n    }\n  }\n}\n';
  const ok = await sut.app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: hcl, Canonicalize: true } });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json<Job>().ID, 'hello');
  assert.equal(ok.json<Job>().TaskGroups[0]!.Count, 1, 'canonicalized');
  const raw = await sut.app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: hcl } });
  assert.equal(raw.json<{ TaskGroups: { Count?: number }[] }>().TaskGroups[0]!.Count, undefined, 'as written without Canonicalize');
  const bad = await sut.app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: 'nothing' } });
  assert.equal(bad.statusCode, 400);
  const missing = await sut.app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: {} });
  assert.equal(missing.statusCode, 400);
  assert.match(missing.body, /JobHCL/);
});

