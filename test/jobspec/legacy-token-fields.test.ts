import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateJob } from '../../src/structs/job-validate.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { parseJobspecFile } from '../../src/jobspec/index.js';
import { repoPath } from './repo-root.js';

const fixture = (name: string): string => repoPath('test/fixtures/jobspecs', name);

test('legacy-token-fields.hcl: consul_token and vault_token parse into the job as Nomad decodes them', async () => {
  const job = canonicalizeJob(await parseJobspecFile(fixture('legacy-token-fields.hcl')));
  assert.equal(job.ConsulToken, 'c0nsul-s3cret');
  assert.equal(job.VaultToken, 'hvs.v4ult-s3cret');
});

test('legacy-token-fields.hcl: registration refuses both fields by name and never echoes the token', async () => {
  const job = canonicalizeJob(await parseJobspecFile(fixture('legacy-token-fields.hcl')));
  const messages = validateJob(job).map((p) => `${p.path}: ${p.message}`);
  assert.ok(messages.some((m) => m.includes('job "legacy": consul_token: Consul is not supported by Caravan')), JSON.stringify(messages));
  assert.ok(messages.some((m) => m.includes('job "legacy": vault_token: Vault is not supported by Caravan')), JSON.stringify(messages));
  assert.ok(!messages.some((m) => m.includes('s3cret')), 'the secret is not in any message');
});

test('a job without the fields carries none after canonicalization', async () => {
  const job = canonicalizeJob(await parseJobspecFile(fixture('task-devices.hcl')));
  assert.equal('ConsulToken' in job, false);
  assert.equal('VaultToken' in job, false);
});
