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
