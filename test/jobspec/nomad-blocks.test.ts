import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { JobValidationError, validateJob } from '../../src/structs/job-validate.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { loadJobFile, parseJobspec, parseJobspecFile } from '../../src/jobspec/index.js';
import { repoPath } from './repo-root.js';

const fixture = (name: string): string => repoPath('test/fixtures/jobspecs', name);

test('task-in-job.hcl: a task directly in the job gets its own group, before the others', async () => {
  const job = await loadJobFile(fixture('task-in-job.hcl'));
  assert.deepEqual(job.TaskGroups.map((g) => [g.Name, g.Count, g.Tasks.map((t) => t.Name)]), [
    ['hello', 1, ['hello']],
    ['grouped', 1, ['world']],
  ]);
  assert.equal(job.TaskGroups[0]!.RestartPolicy?.Attempts, 3, 'the wrapping group gets the batch defaults');
});

test('unsupported-consul-vault-csi.hcl parses and keeps every block, and validation names each feature', async () => {
  const draft = await parseJobspecFile(fixture('unsupported-consul-vault-csi.hcl'));
  const g = draft.TaskGroups![0]!;
  assert.deepEqual(g.Consul, { Namespace: 'apps' });
  assert.deepEqual(g.Services![0]!.Connect, {
    SidecarService: { Proxy: { Upstreams: { DestinationName: 'db', LocalBindPort: 5432 } } },
  });
  assert.deepEqual(g.Tasks![0]!.Vault, { Policies: ['read-secrets'], ChangeMode: 'restart' });
  assert.deepEqual(g.Tasks![1]!.CSIPluginConfig, { ID: 'ebs', Type: 'monolith', MountDir: '/csi' });
  const job = canonicalizeJob(draft);
  assert.deepEqual(job.TaskGroups[0]!.Services![0]!.Connect, g.Services![0]!.Connect, 'canonicalization keeps the block');
  const messages = validateJob(job).map((p) => `${p.path}: ${p.message}`);
  for (const want of [
    'group "api": consul: Consul is not supported by Caravan',
    'group "api": volume "data": CSI volumes are not supported by Caravan',
    'group "api": service "api": connect: Consul Connect is not supported by Caravan',
    'task "server": vault: Vault is not supported by Caravan',
    'task "plugin": csi_plugin: CSI plugins are not supported by Caravan',
  ]) {
    assert.ok(messages.some((m) => m.includes(want)), `expected "${want}" in ${JSON.stringify(messages, null, 1)}`);
  }
  await assert.rejects(loadJobFile(fixture('unsupported-consul-vault-csi.hcl')), (e: unknown) => e instanceof JobValidationError && /Consul Connect is not supported by Caravan/.test(e.message));
});

test('max-run-duration.hcl: the group limit reaches tasks without their own; only batch and sysbatch', async () => {
  const job = await loadJobFile(fixture('max-run-duration.hcl'));
  assert.equal(job.TaskGroups[0]!.MaxRunDuration, 5e9);
  assert.deepEqual(job.TaskGroups[0]!.Tasks.map((t) => t.MaxRunDuration), [5e9, 2e9]);
  const service = readFileSync(fixture('max-run-duration.hcl'), 'utf8').replace('type = "batch"', 'type = "service"');
  const problems = validateJob(canonicalizeJob(await parseJobspec(service))).map((p) => p.message);
  assert.ok(problems.includes('max_run_duration is only supported for batch and sysbatch jobs, not "service"'), problems.join('\n'));
  const plain = await loadJobFile(fixture('task-in-job.hcl'));
  assert.equal('MaxRunDuration' in plain.TaskGroups[0]!.Tasks[0]!, false, 'jobs without it keep their exact shape');
});

test('task-actions.hcl: actions kept on the task, runtime references left for the client', async () => {
  const job = await loadJobFile(fixture('task-actions.hcl'));
  assert.deepEqual(job.TaskGroups[0]!.Tasks[0]!.Actions, [
    { Name: 'hello', Command: '/bin/echo', Args: ['hello', 'from', '${NOMAD_TASK_NAME}'] },
    { Name: 'date', Command: '/bin/date', Args: null },
  ]);
  await assert.rejects(
    parseJobspec('job "x" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      action "a" { args = ["x"] }\n    }\n  }\n}\n'),
    /action "a": "command" is required/,
  );
});

test('network-cni-args.hcl: cni args kept on the group network', async () => {
  const job = await loadJobFile(fixture('network-cni-args.hcl'));
  assert.deepEqual(job.TaskGroups[0]!.Networks![0]!.CNI, { Args: { IgnoreUnknown: 'true', K8S_POD_NAME: '${NOMAD_ALLOC_ID}' } });
  assert.equal(job.TaskGroups[0]!.Networks![0]!.Mode, 'cni/mynet');
});

test('job-ui.hcl: the ui block (description and links) is kept on the job', async () => {
  const job = await loadJobFile(fixture('job-ui.hcl'));
  assert.deepEqual(job.UI, {
    Description: 'A **markdown** description',
    Links: [
      { Label: 'Runbook', URL: 'https://example.com/runbook' },
      { Label: 'Dashboard', URL: 'https://example.com/dash' },
    ],
  });
});
