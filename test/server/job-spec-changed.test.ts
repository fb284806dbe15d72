/**
 * A job registered again is a new version exactly when its spec changed (Nomad's
 * Job.SpecChanged): the job's own bookkeeping fields and the indexes stamped on its scaling
 * policies do not count, but a spec key that happens to share a bookkeeping field's name does —
 * `env { Version = "2" }` was ignored, so the job's allocations kept the old value for good.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HarnessState } from '../scheduler/harness.js';
import { mockSystemJob } from '../mock/factories.js';
import type { Job } from '../../src/structs/index.js';

test('a spec key named like a bookkeeping field (env Version, meta Status) makes a new version; the bookkeeping fields do not', () => {
  const state = new HarnessState();
  const job = mockSystemJob();
  job.TaskGroups[0]!.Tasks[0]!.Env = { Version: '1' };
  job.TaskGroups[0]!.Scaling = { ID: 'p1', Type: 'horizontal', Target: {}, Policy: null, Min: 0, Max: 3, Enabled: true, CreateIndex: 0, ModifyIndex: 0 } as never;
  state.upsertJob(structuredClone(job));
  const stored = (): Job => state.jobById(job.Namespace, job.ID)!;
  const v0 = stored();

  // The stored job sent back as it is (bookkeeping and stamped policy indexes included): no new version.
  state.upsertJob({ ...structuredClone(v0), Status: 'running', Stable: true, SubmitTime: 1 });
  assert.equal(stored().JobModifyIndex, v0.JobModifyIndex);
  assert.equal(stored().Version, 0);

  const env = structuredClone(stored());
  env.TaskGroups[0]!.Tasks[0]!.Env = { Version: '2' };
  state.upsertJob(env);
  assert.notEqual(stored().JobModifyIndex, v0.JobModifyIndex, 'env Version changed: a new spec');
  assert.equal(stored().Version, 1);

  const meta = structuredClone(stored());
  meta.TaskGroups[0]!.Meta = { Status: 'blue' };
  state.upsertJob(meta);
  assert.equal(stored().Version, 2, 'a group meta key named Status changed: a new spec');
});
