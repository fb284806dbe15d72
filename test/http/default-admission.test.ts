import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpServer } from '../../src/http/http-server.js';
import { defaultJobAdmission } from '../../src/http/job-admission.js';
import type { Job } from '../../src/structs/index.js';
import { FakeServerApi } from './fake-server-api.js';

const HCL = `
job "hello" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}
`;

test('the real admission parses HCL through /v1/jobs/parse and registers the canonical job', async () => {
  const server = new FakeServerApi();
  const app = createHttpServer({ server, admission: defaultJobAdmission });
  const parsed = await app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: HCL, Canonicalize: true } });
  assert.equal(parsed.statusCode, 200, parsed.body);
  const job = parsed.json<Job>();
  assert.equal(job.ID, 'hello');
  assert.equal(job.TaskGroups[0]!.Count, 1);
  const reg = await app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: job } });
  assert.equal(reg.statusCode, 200, reg.body);
  assert.equal(server.state.jobById('default', 'hello')!.Priority, 50);
});

test('the real admission rejects a job without a driver, naming the task', async () => {
  const server = new FakeServerApi();
  const app = createHttpServer({ server, admission: defaultJobAdmission });
  const res = await app.inject({
    method: 'PUT',
    url: '/v1/jobs',
    payload: { Job: { ID: 'x', Name: 'x', Datacenters: ['dc1'], TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }] } },
  });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /task "t"/);
  assert.match(res.body, /driver/);
  assert.equal(server.calls.length, 0);
  const syntax = await app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: 'job "x" {' } });
  assert.equal(syntax.statusCode, 400);
});
