import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

const hcl = (env: string): string => sleepJobHcl('web', { env });

test('CLI: top-level aliases, job scale/revert, system gc, operator scheduler get/set-config against a real agent', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-cli-actions-'));
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    const node = mockNode({ ID: randomUUID(), Name: 'n1', Status: 'ready' });
    assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: node })).status, 200);
    const file = join(tmp, 'web.hcl');
    await writeFile(file, hcl('one'));
    const validate = await runCli(a, ['validate', file]);
    assert.equal(validate.code, 0, validate.stderr);
    const run = await runCli(a, ['run', file]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    await writeFile(file, hcl('two'));
    assert.equal((await runCli(a, ['run', '-detach', file])).code, 0);
    const inspect = await runCli(a, ['inspect', 'web']);
    assert.equal(inspect.code, 0, inspect.stderr);
    assert.match(inspect.stdout, /"V": "two"/);

    // job run sent each version's source; the server keeps it per version.
    const sub0 = await api<{ Source: string; Format: string; Version: number; JobID: string }>(a, 'GET', '/v1/job/web/submission?version=0');
    assert.equal(sub0.status, 200, sub0.text);
    assert.match(sub0.body.Source, /V = "one"/);
    assert.equal(sub0.body.Format, 'hcl2');
    assert.equal(sub0.body.JobID, 'web');
    const current = await api<{ Source: string; Version: number }>(a, 'GET', '/v1/job/web/submission');
    assert.equal(current.body.Version, 1);
    assert.match(current.body.Source, /V = "two"/);
    assert.equal((await api(a, 'GET', '/v1/job/web/submission?version=9')).status, 404);
    assert.equal((await api(a, 'GET', '/v1/job/web/submission?version=x')).status, 400);
    assert.equal((await api(a, 'GET', '/v1/job/nope/submission?version=0')).status, 404);
    const badSub = await api(a, 'PUT', '/v1/jobs', { Job: (await api(a, 'GET', '/v1/job/web')).body, Submission: { Source: 7 } });
    assert.equal(badSub.status, 400);
    assert.match(badSub.text, /Submission.Source must be a string/);

    const scale = await runCli(a, ['job', 'scale', 'web', '3']);
    assert.equal(scale.code, 0, `${scale.stdout}\n${scale.stderr}`);
    assert.match(scale.stdout, /Monitoring evaluation/);
    // 1 → 3: Nomad's monitor says the one it kept was modified and the two new ones created.
    assert.equal(scale.stdout.match(/Allocation "[0-9a-f]{8}" created:/g)?.length, 2, scale.stdout);
    assert.equal(scale.stdout.match(/Allocation "[0-9a-f]{8}" modified:/g)?.length, 1, scale.stdout);
    assert.equal((await api<Job>(a, 'GET', '/v1/job/web')).body.TaskGroups[0]!.Count, 3);
    assert.equal((await runCli(a, ['job', 'scale', '-detach', 'web', 'g', '2'])).code, 0);
    assert.equal((await api<Job>(a, 'GET', '/v1/job/web')).body.TaskGroups[0]!.Count, 2);
    const events = await runCli(a, ['job', 'scaling-events', '-verbose', 'web']);
    assert.equal(events.code, 0, events.stderr);
    assert.match(events.stdout, /Task Group +Count +PrevCount +Error +Date +EvalID +Message/);
    assert.match(events.stdout, /g +2 +3 +false .*\n/);
    assert.match(events.stdout, /g +3 +1 +false /);
    const badCount = await runCli(a, ['job', 'scale', 'web', 'lots']);
    assert.equal(badCount.code, 2);
    assert.match(badCount.stderr, /count must be a non-negative integer/);
    const badGroup = await runCli(a, ['job', 'scale', 'web', 'nope', '2']);
    assert.equal(badGroup.code, 1);
    assert.match(badGroup.stderr, /task group "nope" specified for scaling does not exist/);

    const revert = await runCli(a, ['job', 'revert', '-detach', 'web', '0']);
    assert.equal(revert.code, 0, revert.stderr);
    const reverted = (await api<Job>(a, 'GET', '/v1/job/web')).body;
    assert.equal(reverted.TaskGroups[0]!.Tasks[0]!.Env?.['V'], 'one');
    const badRevert = await runCli(a, ['job', 'revert', 'web', '99']);
    assert.equal(badRevert.code, 1);
    assert.match(badRevert.stderr, /at version 99 not found/);

    const set = await runCli(a, ['operator', 'scheduler', 'set-config', '-scheduler-algorithm=spread', '-reject-job-registration=false']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /Scheduler configuration updated!/);
    const get = await runCli(a, ['operator', 'scheduler', 'get-config']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /Scheduler Algorithm\s+= spread/);
    assert.match(get.stdout, /System Scheduler Enabled\s+= true/);
    const stale = await runCli(a, ['operator', 'scheduler', 'set-config', '-scheduler-algorithm=binpack', '-check-index=1']);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /check index did not match/);
    assert.equal((await runCli(a, ['operator', 'scheduler', 'set-config', '-scheduler-algorithm=random'])).code, 2);

    const stop = await runCli(a, ['stop', '-detach', 'web']);
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal((await api<Job>(a, 'GET', '/v1/job/web')).body.Stop, true);
    const gc = await runCli(a, ['system', 'gc']);
    assert.equal(gc.code, 0, gc.stderr);
    assert.equal((await runCli(a, ['system', 'reconcile', 'summaries'])).code, 0);
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
});
