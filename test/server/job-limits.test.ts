/**
 * The server's job limits in admission: job_max_count (sum of group counts, 0 for none),
 * job_max_priority and job_default_priority, as Nomad's job endpoint applies them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admitJob } from '../../src/server/job-admission.js';
import { DEFAULT_JOB_LIMITS, type JobLimits } from '../../src/server/job-limits.js';
import { ServerError } from '../../src/server/server-error.js';

function apiJob(counts: number[], over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ID: 'web',
    Datacenters: ['*'],
    TaskGroups: counts.map((count, i) => ({ Name: `g${i}`, Count: count, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' } }] })),
    ...over,
  };
}

function refusal(input: unknown, limits?: JobLimits): string {
  try {
    admitJob(input, { region: 'global', ...(limits ? { limits } : {}) });
  } catch (err) {
    assert.ok(err instanceof ServerError && err.code === 'JOB_INVALID', String(err));
    return err.message;
  }
  return assert.fail('admitted');
}

test("the sum of the groups' counts is bounded by job_max_count (default 50,000), in Nomad's words", () => {
  assert.equal(admitJob(apiJob([50_000]), { region: 'global' }).TaskGroups[0]!.Count, 50_000, 'the limit itself is admitted');
  assert.match(refusal(apiJob([50_001])), /total count was greater than configured job_max_count: 50001 > 50000/);
  assert.match(refusal(apiJob([25_000, 25_001])), /job_max_count: 50001 > 50000/);
  assert.match(refusal(apiJob([1_000_000_000])), /1000000000 > 50000/);
  const raised = { ...DEFAULT_JOB_LIMITS, maxCount: 2_000_000 };
  assert.equal(admitJob(apiJob([1_000_000]), { region: 'global', limits: raised }).TaskGroups[0]!.Count, 1_000_000);
  const none = { ...DEFAULT_JOB_LIMITS, maxCount: 0 };
  assert.equal(admitJob(apiJob([1_000_000_000]), { region: 'global', limits: none }).TaskGroups[0]!.Count, 1_000_000_000, '0 means no limit');
});

test('priority is 1..job_max_priority; an unstated or zero priority is job_default_priority', () => {
  assert.match(refusal(apiJob([1], { Priority: 101 })), /priority must be between 1 and 100, got 101/);
  assert.match(refusal(apiJob([1], { Priority: -1 })), /priority must be between 1 and 100, got -1/);
  const raised = { ...DEFAULT_JOB_LIMITS, maxPriority: 200, defaultPriority: 70 };
  assert.equal(admitJob(apiJob([1], { Priority: 150 }), { region: 'global', limits: raised }).Priority, 150);
  assert.match(refusal(apiJob([1], { Priority: 201 }), raised), /between 1 and 200, got 201/);
  assert.equal(admitJob(apiJob([1]), { region: 'global', limits: raised }).Priority, 70);
  assert.equal(admitJob(apiJob([1], { Priority: 0 }), { region: 'global', limits: raised }).Priority, 70);
  assert.equal(admitJob(apiJob([1]), { region: 'global' }).Priority, 50);
});
