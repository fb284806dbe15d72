import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Job } from '../../src/structs/index.js';
import { repoPath } from '../jobspec/repo-root.js';
import { startServer, type ServerUnderTest } from './real-server.js';

let sut: ServerUnderTest;

before(async () => {
  sut = await startServer();
});

after(() => sut.close());

const fixture = (name: string): string => readFileSync(repoPath('test/fixtures/jobspecs', name), 'utf8');

async function parse(hcl: string) {
  return sut.app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: hcl, Canonicalize: true } });
}

test('connect, consul, vault and CSI blocks parse, then registration refuses them naming each feature', async () => {
  const parsed = await parse(fixture('unsupported-consul-vault-csi.hcl'));
  assert.equal(parsed.statusCode, 200, parsed.body);
  const job = parsed.json<Job>();
  assert.deepEqual(job.TaskGroups[0]!.Consul, { Namespace: 'apps' });

  const reg = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: job } });
  assert.equal(reg.statusCode, 400, reg.body);
  for (const feature of ['Consul Connect is not supported by Caravan', 'Vault is not supported by Caravan', 'CSI volumes are not supported by Caravan', 'CSI plugins are not supported by Caravan']) {
    assert.match(reg.body, new RegExp(feature), `register: ${feature}`);
  }
  assert.equal(sut.server.state.jobById('default', 'mesh'), undefined, 'nothing stored');

  const validate = await sut.app.inject({ method: 'PUT', url: '/v1/validate/job', payload: { Job: job } });
  assert.match(validate.body, /Consul Connect is not supported by Caravan/);
  const plan = await sut.app.inject({ method: 'PUT', url: '/v1/job/mesh/plan', payload: { Job: job } });
  assert.equal(plan.statusCode, 400, plan.body);
  assert.match(plan.body, /Consul Connect is not supported by Caravan/);
});

test('HCL2 functions, locals and dynamic blocks evaluate on the server parse', async () => {
  const res = await parse(fixture('hcl2-dynamic.hcl'));
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json<Job>().TaskGroups.map((g) => g.Name), ['api', 'worker']);
  const task = await parse(fixture('task-in-job.hcl'));
  assert.deepEqual(task.json<Job>().TaskGroups.map((g) => g.Name), ['hello', 'grouped']);
});

test('the server parse refuses filesystem functions, naming the function and the line', async () => {
  const res = await parse('job "x" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      env { K = file("/etc/passwd") }\n    }\n  }\n}\n');
  assert.equal(res.statusCode, 400, res.body);
  assert.match(res.body, /input\.hcl:5: .*file\(\): filesystem function file\(\) is disabled/);
  assert.doesNotMatch(res.body, /root:/);
});

test('GET /v1/job/:id/actions lists the task action blocks with their task and group', async () => {
  const parsed = await parse(fixture('task-actions.hcl'));
  assert.equal(parsed.statusCode, 200, parsed.body);
  const reg = await sut.app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: parsed.json<Job>() } });
  assert.equal(reg.statusCode, 200, reg.body);
  const res = await sut.app.inject({ method: 'GET', url: '/v1/job/with-actions/actions' });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), [
    { Name: 'hello', Command: '/bin/echo', Args: ['hello', 'from', '${NOMAD_TASK_NAME}'], TaskName: 'server', TaskGroupName: 'app' },
    { Name: 'date', Command: '/bin/date', Args: null, TaskName: 'server', TaskGroupName: 'app' },
  ]);
});
