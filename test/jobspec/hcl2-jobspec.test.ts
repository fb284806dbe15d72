import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobspecParseError, loadJobFile, parseJobspec } from '../../src/jobspec/index.js';
import { repoPath } from './repo-root.js';

const fixture = (name: string): string => repoPath('test/fixtures/jobspecs', name);

test('hcl2-locals-functions.hcl: typed variables, locals in any order, functions, file functions beside the file', async () => {
  const job = await loadJobFile(fixture('hcl2-locals-functions.hcl'));
  assert.deepEqual(job.Datacenters, ['dc1', 'dc2']);
  assert.equal(job.TaskGroups[0]!.Count, 2, 'a number variable given as "2" converts');
  assert.deepEqual(job.Meta, { encoded: 'd2ViLTEuMi4z', subnet: '10.0.2.0/24', workers: '4', envs: 'app.env', checksum: 'd8ce2aa1cfe3' });
  const task = job.TaskGroups[0]!.Tasks[0]!;
  assert.deepEqual(task.Config.args, ['-c', 'echo web-1.2.3 on port 8080 in ${NOMAD_ALLOC_DIR} at ${attr.kernel.name}']);
  assert.deepEqual(task.Env, { PORTS: 'admin=8001 http=8000 ', MODE: 'ha', TEAM: 'CORE', LITERAL: '${NOMAD_TASK_NAME}' });
  const one = await loadJobFile(fixture('hcl2-locals-functions.hcl'), { vars: ['replicas=1'] });
  assert.equal(one.TaskGroups[0]!.Tasks[0]!.Env?.MODE, 'single');
  await assert.rejects(loadJobFile(fixture('hcl2-locals-functions.hcl'), { vars: ['replicas=11'] }), /The replicas must be between 1 and 10/);
  await assert.rejects(loadJobFile(fixture('hcl2-locals-functions.hcl'), { vars: ['datacenters=["a",'] }), /is not valid for type list/);
});

test('hcl2-dynamic.hcl: dynamic groups, tasks and constraints', async () => {
  const job = await loadJobFile(fixture('hcl2-dynamic.hcl'));
  assert.deepEqual(job.TaskGroups.map((g) => [g.Name, g.Count, g.Tasks.map((t) => t.Name)]), [
    ['api', 2, ['server', 'worker']],
    ['worker', 1, ['runner']],
  ]);
  assert.deepEqual(job.TaskGroups[0]!.Tasks[1]!.Config.args, ['api/worker', 1]);
  assert.deepEqual(job.Constraints?.map((c) => [c.LTarget, c.RTarget]), [['${attr.kernel.name}', 'linux'], ['${node.class}', 'edge']]);
});

test('the server parse (no file functions) refuses file() with a message naming it', async () => {
  const src = `job "x" {\n  meta { f = file("/etc/hostname") }\n  group "g" {\n    task "t" { driver = "raw_exec" }\n  }\n}\n`;
  const err = await parseJobspec(src).then(() => assert.fail('expected a refusal'), (e: unknown) => e);
  assert.ok(err instanceof JobspecParseError);
  assert.match(err.message, /meta: f: file\(\): filesystem function file\(\) is disabled/);
  assert.equal(err.problems[0]!.line, 2);
});

test('a -var list may be written as HCL', async () => {
  const src = `variable "dcs" { type = list(string) }\njob "x" {\n  datacenters = var.dcs\n  group "g" {\n    task "t" { driver = "raw_exec" }\n  }\n}\n`;
  const draft = await parseJobspec(src, { vars: ['dcs=["a", "b"]'] });
  assert.deepEqual(draft.Datacenters, ['a', 'b']);
});

test('NOMAD_VAR_<name> gives a value below -var-file and -var; undeclared ones are ignored', async () => {
  const src = `variable "n" {\n  type    = number\n  default = 1\n}\njob "x" {\n  group "g" {\n    count = var.n\n    task "t" {\n      driver = "raw_exec"\n    }\n  }\n}\n`;
  const count = async (opts: Parameters<typeof parseJobspec>[1]) => (await parseJobspec(src, opts)).TaskGroups![0]!.Count;
  assert.equal(await count({}), 1);
  assert.equal(await count({ env: { NOMAD_VAR_n: '3', NOMAD_VAR_other: 'x', PATH: '/bin' } }), 3);
  assert.equal(await count({ env: { NOMAD_VAR_n: '3' }, vars: ['n=5'] }), 5);
  await assert.rejects(parseJobspec(src, { env: { NOMAD_VAR_n: 'many' } }), /variable "n": value "many" is not a number/);
});
