import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobspecParseError, parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { validateJob } from '../../src/structs/job-validate.js';

const apiJob = {
  ID: 'api',
  Type: 'batch',
  TaskGroups: [
    {
      Name: 'g',
      Count: 2,
      Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, KillTimeout: 2_000_000_000 }],
    },
  ],
};

test('API JSON {"Job": …} and a bare job object both decode', async () => {
  for (const text of [JSON.stringify({ Job: apiJob }), JSON.stringify(apiJob)]) {
    const job = canonicalizeJob(await parseJobspec(text, { filename: 'job.json' }));
    assert.equal(job.ID, 'api');
    assert.equal(job.Name, 'api');
    assert.equal(job.TaskGroups[0]!.Count, 2);
    assert.equal(job.TaskGroups[0]!.Tasks[0]!.KillTimeout, 2_000_000_000);
    assert.equal(job.TaskGroups[0]!.RestartPolicy?.Attempts, 3);
    assert.deepEqual(validateJob(job), []);
  }
});

test('API JSON: a canonical job round-trips unchanged', async () => {
  const once = canonicalizeJob(await parseJobspec(JSON.stringify({ Job: apiJob })));
  const twice = canonicalizeJob(await parseJobspec(JSON.stringify({ Job: once })));
  assert.deepEqual(twice, once);
});

test('API JSON: wrong field types name the field', async () => {
  const bad = { Job: { ID: 'x', Priority: 'high', TaskGroups: [{ Name: 'g', Count: '2', Tasks: [{ Name: 't', Driver: 7 }] }] } };
  await assert.rejects(parseJobspec(JSON.stringify(bad)), (e: unknown) => {
    assert.ok(e instanceof JobspecParseError);
    const msgs = e.problems.map((p) => `${p.path}: ${p.message}`);
    assert.deepEqual(msgs, [
      'job "x": Priority must be a number, got "high"',
      'job "x": group "g": Count must be a number, got "2"',
      'job "x": group "g": task "t": Driver must be a string, got 7',
    ]);
    return true;
  });
});

test('invalid JSON is a parse error', async () => {
  await assert.rejects(parseJobspec('{"Job": ', { filename: 'x.json' }), /x\.json: invalid JSON/);
});

test('decodeApiJob: request bodies with mistyped fields are rejected, naming the field', async () => {
  const { decodeApiJob } = await import('../../src/jobspec/index.js');
  assert.throws(
    () => decodeApiJob({ Job: { ID: 'x', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: 'oops' }] }] } }),
    (e: unknown) => e instanceof JobspecParseError && /task "t": Config must be an object/.test(e.message),
  );
  assert.throws(() => decodeApiJob('nope'), JobspecParseError);
  assert.equal(decodeApiJob({ Job: apiJob }).ID, 'api');
});
