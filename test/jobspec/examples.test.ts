import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadJobFile } from '../../src/jobspec/index.js';
import { repoPath } from './repo-root.js';

test('examples/service.hcl: three raw_exec copies with a dynamic port', async () => {
  const job = await loadJobFile(repoPath('examples/service.hcl'));
  assert.equal(job.ID, 'web');
  assert.equal(job.Type, 'service');
  const g = job.TaskGroups[0]!;
  assert.equal(g.Count, 3);
  assert.equal(g.Tasks[0]!.Driver, 'raw_exec');
  assert.equal(g.Tasks[0]!.Config.command, '/bin/sh');
  assert.deepEqual(g.Networks?.[0]?.DynamicPorts?.map((p) => p.Label), ['http']);
  // $${…} is HCL's escape: the task sees ${NOMAD_…} for runtime interpolation.
  assert.match(String((g.Tasks[0]!.Config.args as string[])[1]), /\$\{NOMAD_ALLOC_INDEX\}/);
  assert.deepEqual(g.Tasks[0]!.Env, { GREETING: 'hello from caravan' });
});

test('examples/batch.hcl: batch defaults', async () => {
  const job = await loadJobFile(repoPath('examples/batch.hcl'));
  assert.equal(job.Type, 'batch');
  assert.equal(job.TaskGroups[0]!.RestartPolicy?.Attempts, 3);
  assert.equal(job.TaskGroups[0]!.Update, null);
});

test('examples/lifecycle.hcl: tasks keep source order and lifecycle hooks', async () => {
  const job = await loadJobFile(repoPath('examples/lifecycle.hcl'));
  const tasks = job.TaskGroups[0]!.Tasks;
  assert.deepEqual(tasks.map((t) => t.Name), ['init', 'sidecar', 'main', 'announce', 'cleanup']);
  assert.deepEqual(tasks.map((t) => t.Lifecycle), [
    { Hook: 'prestart', Sidecar: false },
    { Hook: 'prestart', Sidecar: true },
    null,
    { Hook: 'poststart', Sidecar: false },
    { Hook: 'poststop', Sidecar: false },
  ]);
});

test('examples/parameterized.hcl: parameterized block, dispatch payload and a variable default', async () => {
  const job = await loadJobFile(repoPath('examples/parameterized.hcl'));
  assert.deepEqual(job.ParameterizedJob, { Payload: 'optional', MetaRequired: ['name'], MetaOptional: ['greeting'] });
  const task = job.TaskGroups[0]!.Tasks[0]!;
  assert.deepEqual(task.DispatchPayload, { File: 'input.txt' });
  assert.match(String((task.Config.args as string[])[1]), /sleep 1$/);
  const overridden = await loadJobFile(repoPath('examples/parameterized.hcl'), { vars: ['sleep_seconds=7'] });
  assert.match(String((overridden.TaskGroups[0]!.Tasks[0]!.Config.args as string[])[1]), /sleep 7$/);
});
