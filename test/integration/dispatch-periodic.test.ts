import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Job, JobSummary } from '../../src/structs/index.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

async function completeAlloc(address: string, jobId: string): Promise<AllocListStub> {
  return waitUntil(
    `a complete alloc of ${jobId}`,
    async () => {
      const l = await api<AllocListStub[]>(address, 'GET', `/v1/job/${encodeURIComponent(jobId)}/allocations`);
      return Array.isArray(l.body) ? l.body.find((a) => a.ClientStatus === 'complete') : undefined;
    },
    30_000,
  );
}

test('dispatch and periodic jobs through a dev agent', async () => {
  const dataDir = await mkdtemp('/tmp/cdp-');
  const work = await mkdtemp('/tmp/cdp-in-');
  const agent = await startAgent({ roleArgs: ['-dev'], dataDir });
  try {
    // The parameterized parent registers without an evaluation and is never placed.
    const run = await runCli(agent.address, ['job', 'run', '-detach', 'examples/parameterized.hcl']);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const parent = await api<Job>(agent.address, 'GET', '/v1/job/greet');
    assert.equal(parent.body.Status, 'running');

    // Validation errors name the key.
    const missing = await api(agent.address, 'POST', '/v1/job/greet/dispatch', { Meta: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.text, /required meta keys: name/);
    const unknown = await api(agent.address, 'POST', '/v1/job/greet/dispatch', { Meta: { name: 'x', color: 'red' } });
    assert.equal(unknown.status, 400);
    assert.match(unknown.text, /unpermitted metadata keys: color/);

    // Dispatch with meta and a payload through the CLI, monitoring the evaluation.
    const input = join(work, 'payload.txt');
    await writeFile(input, 'payload-from-file\n');
    const d = await runCli(agent.address, ['job', 'dispatch', '-meta', 'name=world', 'greet', input]);
    assert.equal(d.code, 0, d.stderr + d.stdout);
    const m = /Dispatched Job ID = (\S+)/.exec(d.stdout);
    assert.ok(m, d.stdout);
    const childId = m[1]!;
    assert.match(childId, /^greet\/dispatch-\d+-[0-9a-f]{8}$/);
    assert.match(d.stdout, /Monitoring evaluation/);

    const child = await api<Job>(agent.address, 'GET', `/v1/job/${encodeURIComponent(childId)}`);
    assert.equal(child.body.ParentID, 'greet');
    assert.equal(child.body.Dispatched, true);
    assert.equal(child.body.ParameterizedJob, null);

    const alloc = await completeAlloc(agent.address, childId);
    const logs = await api(agent.address, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent('alloc/logs/say.stdout.0')}`);
    assert.equal(logs.status, 200, logs.text);
    assert.match(logs.text, /hello world/);
    assert.match(logs.text, /payload-from-file/);

    const parentAllocs = await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/greet/allocations');
    assert.deepEqual(parentAllocs.body, []);
    const summary = await waitUntil('children counted', async () => {
      const s = await api<JobSummary>(agent.address, 'GET', '/v1/job/greet/summary');
      return s.body.Children && s.body.Children.Dead + s.body.Children.Running >= 1 ? s.body : undefined;
    });
    assert.ok(summary.Children);

    // A periodic job with a 6-field (seconds) cron launches children that run.
    const periodic = {
      ID: 'tick',
      Type: 'batch',
      Datacenters: ['dc1'],
      Periodic: { Enabled: true, Spec: '*/2 * * * * *', ProhibitOverlap: true },
      TaskGroups: [
        {
          Name: 'g',
          Count: 1,
          Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'echo tick'] }, Resources: { CPU: 50, MemoryMB: 32 } }],
        },
      ],
    };
    const reg = await api<{ EvalID: string }>(agent.address, 'PUT', '/v1/jobs', { Job: periodic });
    assert.equal(reg.status, 200, reg.text);
    assert.equal(reg.body.EvalID, '');
    const firstChild = await waitUntil(
      'a periodic child',
      async () => {
        const l = await api<Job[]>(agent.address, 'GET', `/v1/jobs?prefix=${encodeURIComponent('tick/periodic-')}`);
        return l.body[0];
      },
      20_000,
    );
    assert.equal(firstChild.ParentID, 'tick');
    await completeAlloc(agent.address, firstChild.ID);
    const tickJob = await api<Job>(agent.address, 'GET', '/v1/job/tick');
    assert.equal(tickJob.body.Status, 'running');

    // A forced launch through the CLI.
    const force = await runCli(agent.address, ['job', 'periodic', 'force', 'tick']);
    assert.equal(force.code, 0, force.stderr + force.stdout);
    assert.match(force.stdout, /Monitoring evaluation/);

    const stop = await runCli(agent.address, ['job', 'stop', '-detach', 'tick']);
    assert.equal(stop.code, 0, stop.stderr + stop.stdout);
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(work, { recursive: true, force: true });
  }
});
