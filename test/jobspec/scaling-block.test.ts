/**
 * A group's `scaling` block: kept in the job (it was dropped), Nomad's defaults (enabled, type
 * horizontal, min from count), count from `min` when the group gives none, and Nomad's checks.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { validateJob } from '../../src/structs/job-validate.js';
import { admitJob } from '../../src/server/job-admission.js';

const job = (group: string): string => `job "elastic" {
  group "g" {
${group}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}`;

test('scaling { min = 2 } without count gives count 2 and keeps the block', async () => {
  const j = canonicalizeJob(await parseJobspec(job('    scaling {\n      min = 2\n      max = 10\n    }')));
  const g = j.TaskGroups[0]!;
  assert.equal(g.Count, 2);
  assert.deepEqual(g.Scaling, { ID: '', Type: 'horizontal', Target: {}, Policy: null, Min: 2, Max: 10, Enabled: true, CreateIndex: 0, ModifyIndex: 0 });
  assert.deepEqual(validateJob(j), []);
});

test('an explicit count wins; min defaults to the count; enabled, type and policy are kept', async () => {
  const j = canonicalizeJob(
    await parseJobspec(job('    count = 3\n    scaling {\n      enabled = false\n      max = 5\n      policy {\n        cooldown = "2m"\n        evaluation_interval = "10s"\n      }\n    }')),
  );
  const g = j.TaskGroups[0]!;
  assert.equal(g.Count, 3);
  assert.equal(g.Scaling?.Min, 3);
  assert.equal(g.Scaling?.Enabled, false);
  assert.deepEqual(g.Scaling?.Policy, { cooldown: '2m', evaluation_interval: '10s' });
});

test('a group without a scaling block has none, and count 1', async () => {
  const g = canonicalizeJob(await parseJobspec(job(''))).TaskGroups[0]!;
  assert.equal(g.Count, 1);
  assert.equal(g.Scaling, null);
});

test('Nomad\'s checks: max required, min <= count <= max, horizontal only, one policy', async () => {
  const problems = async (group: string): Promise<string[]> => validateJob(canonicalizeJob(await parseJobspec(job(group)))).map((p) => `${p.path}: ${p.message}`);
  assert.match((await problems('    scaling {\n      min = 1\n    }')).join('\n'), /scaling: maximum count must be specified and non-negative/);
  assert.match((await problems('    count = 9\n    scaling {\n      max = 4\n      min = 1\n    }')).join('\n'), /count must not be greater than maximum count/);
  assert.match((await problems('    count = 1\n    scaling {\n      min = 2\n      max = 4\n    }')).join('\n'), /count must not be less than minimum count/);
  assert.match((await problems('    scaling {\n      min = 4\n      max = 2\n    }')).join('\n'), /maximum count must not be less than minimum count/);
  assert.match((await problems('    scaling {\n      type = "vertical_cpu"\n      max = 2\n    }')).join('\n'), /invalid type: "vertical_cpu"/);
  await assert.rejects(parseJobspec(job('    scaling {\n      max = 2\n      policy {\n        a = 1\n      }\n      policy {\n        b = 2\n      }\n    }')), /only one "policy" block is allowed/);
  await assert.rejects(parseJobspec(job('    scaling {\n      max = 2\n      maximum = 3\n    }')), /unknown attribute "maximum"/);
});

test('API JSON: Scaling fields are type-checked by name and count comes from Min', () => {
  const base = { ID: 'api', Name: 'api', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' } }] }] };
  const withScaling = (scaling: unknown) => ({ ...base, TaskGroups: [{ ...base.TaskGroups[0], Scaling: scaling }] });
  const admitted = admitJob(withScaling({ Min: 2, Max: 3, Policy: { x: 1 } }), { region: 'global' });
  assert.equal(admitted.TaskGroups[0]!.Count, 2);
  assert.equal(admitted.TaskGroups[0]!.Scaling?.Max, 3);
  assert.throws(() => admitJob(withScaling({ Min: 'two', Max: 3 }), { region: 'global' }), /Min must be a number/);
  assert.throws(() => admitJob(withScaling({ Max: 3, Enabled: 'yes' }), { region: 'global' }), /Enabled must be a boolean/);
});
