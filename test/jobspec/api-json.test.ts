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

test('API JSON: templates are checked by the server as the HCL decoder checks them, naming the template', async () => {
  const withTemplates = (templates: Record<string, unknown>[]) => ({
    ...apiJob,
    TaskGroups: [{ ...apiJob.TaskGroups[0]!, Tasks: [{ ...apiJob.TaskGroups[0]!.Tasks[0]!, Templates: templates }] }],
  });
  const problems = async (templates: Record<string, unknown>[]) =>
    validateJob(canonicalizeJob(await parseJobspec(JSON.stringify({ Job: withTemplates(templates) }), { filename: 'job.json' }))).map((p) => `${p.path}: ${p.message}`);
  assert.deepEqual(await problems([{ DestPath: 'local/a', EmbeddedTmpl: 'x', ChangeMode: 'script', ChangeScript: { Command: 'reload' }, Wait: { Min: 1e9, Max: 2e9 } }]), []);
  const found = await problems([
    { DestPath: 'local/a', EmbeddedTmpl: 'x', ChangeMode: 'script', ChangeScript: { Command: '' } },
    { DestPath: 'local/b', EmbeddedTmpl: 'x', ChangeMode: 'script' },
    { DestPath: 'local/c', EmbeddedTmpl: 'x', ChangeMode: 'sometimes' },
    { DestPath: 'local/d', EmbeddedTmpl: 'x', ChangeMode: 'signal', Envvars: true },
    { DestPath: '', EmbeddedTmpl: '', Splay: -1, Perms: '999', Wait: { Min: 3e9, Max: 1e9 } },
  ]);
  const t = 'job "api": group "g": task "t": template';
  assert.deepEqual(found, [
    `${t}[0]: change script needs a command`,
    `${t}[1]: change mode script needs a change script`,
    `${t}[2]: invalid change mode "sometimes": want noop, restart, signal or script`,
    `${t}[3]: cannot use signals with env var templates`,
    `${t}[4]: must specify a destination`,
    `${t}[4]: must specify a source or embedded data`,
    `${t}[4]: splay must not be negative`,
    `${t}[4]: perms must be an octal mode such as "0644", got "999"`,
    `${t}[4]: wait min must not be greater than max`,
  ]);
});

test('API JSON: artifacts are checked at registration as Nomad\'s TaskArtifact.Validate, naming the artifact', async () => {
  const withArtifacts = (artifacts: Record<string, unknown>[]) => ({
    ...apiJob,
    TaskGroups: [{ ...apiJob.TaskGroups[0]!, Tasks: [{ ...apiJob.TaskGroups[0]!.Tasks[0]!, Artifacts: artifacts }] }],
  });
  const problems = async (artifacts: Record<string, unknown>[]) =>
    validateJob(canonicalizeJob(await parseJobspec(JSON.stringify({ Job: withArtifacts(artifacts) }), { filename: 'job.json' }))).map((p) => `${p.path}: ${p.message}`);
  const sha = 'ab'.repeat(32);
  assert.deepEqual(await problems([
    { GetterSource: 'https://example.com/app.tgz', GetterOptions: { checksum: `sha256:${sha}` } },
    { GetterSource: 'local/a', RelativeDest: '../alloc/data', GetterMode: 'dir' },
  ]), []);
  const a = 'job "api": group "g": task "t": artifact';
  assert.deepEqual(await problems([
    { GetterSource: '', RelativeDest: '../../x' },
    { GetterSource: 'local/a', RelativeDest: '/etc/x/../../../..', GetterMode: 'sometimes' },
    { GetterSource: 'local/a', GetterOptions: { checksum: 'sha256' } },
    { GetterSource: 'local/a', GetterOptions: { checksum: 'crc32:00' } },
    { GetterSource: 'local/a', GetterOptions: { checksum: 'md5:zz' } },
  ]), [
    `${a}[0]: source must be specified`,
    `${a}[0]: destination "../../x" escapes the allocation directory`,
    `${a}[1]: destination "/etc/x/../../../.." escapes the allocation directory`,
    `${a}[1]: mode must be one of any, file, dir, got "sometimes"`,
    `${a}[2]: checksum must be given as "type:value"; got "sha256"`,
    `${a}[3]: checksum type "crc32" is not one of md5, sha1, sha256, sha512`,
    `${a}[4]: md5 checksum must be 32 hex digits; got "zz"`,
  ]);
});
