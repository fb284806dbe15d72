import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobSubmissions, MAX_SUBMISSION_BYTES, SUBMISSIONS_KEPT, type JobSubmission } from '../../src/server/state/job-submissions.js';

const sub = (version: number, source = `job "web" { # v${version} }`): JobSubmission => ({
  Source: source,
  Format: 'hcl2',
  VariableFlags: null,
  Variables: '',
  Namespace: 'default',
  JobID: 'web',
  Version: version,
  JobModifyIndex: version + 10,
});

test('job submissions: kept per version, newest versions only, oversized sources dropped, restored from a snapshot', () => {
  const s = new JobSubmissions();
  for (let v = 0; v < SUBMISSIONS_KEPT + 2; v++) s.put(sub(v));
  assert.equal(s.get('default', 'web', 0), undefined, 'the oldest versions are dropped');
  assert.equal(s.get('default', 'web', SUBMISSIONS_KEPT + 1)?.JobModifyIndex, SUBMISSIONS_KEPT + 11);
  assert.equal(s.serialize().length, SUBMISSIONS_KEPT);
  s.put(sub(99, 'x'.repeat(MAX_SUBMISSION_BYTES + 1)));
  assert.equal(s.get('default', 'web', 99), undefined, 'a source over 1 MiB is not kept');
  const copy = new JobSubmissions();
  copy.restore(s.serialize());
  assert.deepEqual(copy.serialize(), s.serialize());
  copy.restore(undefined);
  assert.equal(copy.serialize().length, 0);
  s.deleteJob('default', 'web');
  assert.equal(s.get('default', 'web', SUBMISSIONS_KEPT + 1), undefined);
});
