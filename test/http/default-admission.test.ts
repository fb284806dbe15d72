import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Job } from '../../src/structs/index.js';
import { startServer, type ServerUnderTest } from './real-server.js';

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

let sut: ServerUnderTest;
before(async () => {
  sut = await startServer();
});
after(() => sut.close());

test('the server admission parses HCL through /v1/jobs/parse and registers the canonical job', async () => {
  const parsed = await sut.app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: HCL, Canonicalize: true } });
  assert.equal(parsed.statusCode, 200, parsed.body);
  const job = parsed.json<Job>();
  assert.equal(job.ID, 'hello');
  assert.equal(job.TaskGroups[0]!.Count, 1);
  const reg = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: job } });
  assert.equal(reg.statusCode, 200, reg.body);
  assert.equal(sut.server.state.jobById('default', 'hello')!.Priority, 50);
});

test('the server admission rejects a job without a driver, naming the task, on HTTP and in-process alike', async () => {
  const job = { ID: 'x', Name: 'x', Datacenters: ['dc1'], TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }] };
  const res = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: job } });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /task "t"/);
  assert.match(res.body, /driver/);
  // The same boundary for a caller in the same process: no path skips admission.
  await assert.rejects(sut.server.registerJob(job), (e: unknown) => e instanceof Error && 'code' in e && e.code === 'JOB_INVALID' && /task "t"/.test(e.message));
  assert.equal(sut.server.state.jobById('default', 'x'), undefined, 'nothing was written');
  const syntax = await sut.app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: 'job "x" {' } });
  assert.equal(syntax.statusCode, 400);
});
