import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateJob } from '../../src/structs/job-validate.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { JobspecParseError, parseJobspec, parseJobspecFile } from '../../src/jobspec/index.js';
import { repoPath } from './repo-root.js';

const fixture = (name: string): string => repoPath('test/fixtures/jobspecs', name);

test('group_selection blocks are kept in order, with Nomad\'s default count of 1, and groups keep their own counts', async () => {
  const job = canonicalizeJob(await parseJobspecFile(fixture('group-selection-and-schedule.hcl')));
  assert.deepEqual(job.GroupSelections, [
    { Name: 'hardware', Count: 1, Groups: ['small', 'large'] },
    { Name: 'sized', Count: 2, Groups: ['small', 'large', 'huge'] },
  ]);
  assert.deepEqual(job.TaskGroups.map((g) => [g.Name, g.Count]), [['small', 3], ['large', 1], ['huge', 1]]);
});

test('a task schedule is kept in the shape of Nomad\'s TaskSchedule', async () => {
  const job = canonicalizeJob(await parseJobspecFile(fixture('group-selection-and-schedule.hcl')));
  assert.deepEqual(job.TaskGroups[0]!.Tasks[0]!.Schedule, { Cron: { Start: '0 22 * * *', End: '0 6', Timezone: 'Europe/Paris' } });
  assert.equal(job.TaskGroups[1]!.Tasks[0]!.Schedule, undefined);
});

test('registration refuses each group_selection and the schedule by name', async () => {
  const job = canonicalizeJob(await parseJobspecFile(fixture('group-selection-and-schedule.hcl')));
  const messages = validateJob(job).map((p) => `${p.path}: ${p.message}`);
  for (const want of [
    'job "nightly": group_selection "hardware": group_selection is not supported by Caravan',
    'job "nightly": group_selection "sized": group_selection is not supported by Caravan',
    'group "small": task "work": schedule: task schedules (Nomad Enterprise time-based execution) are not supported by Caravan',
  ]) {
    assert.ok(messages.some((m) => m.includes(want)), `expected "${want}" in ${JSON.stringify(messages, null, 1)}`);
  }
});

test('a group_selection with a misspelt attribute is a parse error naming it', async () => {
  const src = 'job "j" {\n  group_selection "s" {\n    grups = ["a"]\n  }\n  group "a" {\n    task "t" {\n      driver = "exec"\n    }\n  }\n}\n';
  await assert.rejects(parseJobspec(src), (err: unknown) => {
    assert.ok(err instanceof JobspecParseError);
    assert.match(err.message, /unknown attribute "grups"/);
    return true;
  });
});

test('the API JSON Nomad\'s CLI sends: empty token, selection, schedule and device fields are no refusal; set ones are', async () => {
  const apiJob = (extra: Record<string, unknown>, taskExtra: Record<string, unknown>): string =>
    JSON.stringify({
      Job: {
        ID: 'api', Name: 'api', Type: 'batch', ...extra,
        TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'exec', Config: { command: '/bin/true' }, ...taskExtra }] }],
      },
    });
  const quiet = canonicalizeJob(await parseJobspec(
    apiJob({ ConsulToken: '', VaultToken: '', GroupSelections: null }, { Schedule: null, Resources: { CPU: 100, MemoryMB: 64, Devices: null } }),
    { filename: 'job.json' },
  ));
  assert.deepEqual(validateJob(quiet), []);
  const loud = canonicalizeJob(await parseJobspec(
    apiJob(
      { ConsulToken: 'tok', GroupSelections: [{ Name: 'sel', Count: 1, Groups: ['g'] }] },
      { Schedule: { Cron: { Start: '0 1 * * *', End: '0 2' } }, Resources: { CPU: 100, MemoryMB: 64, Devices: [{ Name: 'nvidia/gpu', Count: 1 }] } },
    ),
    { filename: 'job.json' },
  ));
  const paths = validateJob(loud).map((p) => p.path);
  for (const want of ['job "api": consul_token', 'job "api": group_selection "sel"', 'task "t": schedule', 'task "t": resources: device "nvidia/gpu"']) {
    assert.ok(paths.some((p) => p.includes(want)), `expected ${want} in ${JSON.stringify(paths)}`);
  }
});
