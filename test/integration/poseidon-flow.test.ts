import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AllocListStub, Allocation, Job, JobListStub, JobSummary } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { execFrames, waitUntil, watchEvents } from './helpers/poseidon-client.js';

/** A Poseidon-style template job: a "config" group of count 0 carrying meta, one runner group. */
function templateJob(id: string, used: string): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Type: 'batch',
    Datacenters: ['dc1'],
    TaskGroups: [
      { Name: 'config', Count: 0, Meta: { used, prewarmingPoolSize: '1' }, Tasks: [{ Name: 'config', Driver: 'raw_exec', Config: { command: '/bin/true' }, Resources: { CPU: 10, MemoryMB: 10 } }] },
      {
        Name: 'default-group',
        Count: 1,
        RestartPolicy: { Attempts: 3, Interval: 3_600_000_000_000, Delay: 1_000_000_000, Mode: 'fail' },
        Tasks: [{ Name: 'default-task', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['100000'] }, Resources: { CPU: 100, MemoryMB: 64 } }],
      },
    ],
  };
}

async function devAgent(): Promise<AgentProcess> {
  return startAgent({ roleArgs: ['-dev'], extraArgs: [] });
}

async function register(address: string, job: Record<string, unknown>): Promise<{ EvalID: string; JobModifyIndex: number }> {
  const res = await api<{ EvalID: string; JobModifyIndex: number }>(address, 'PUT', '/v1/jobs', { Job: job });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

test('Poseidon flow against a dev agent: template job, events, exec, in-place update, purge', async () => {
  const agent = await devAgent();
  const watch = await watchEvents(agent.address, 'topic=Job:*&topic=Allocation:*');
  try {
    const jobId = 'template-0-runner-1';
    await register(agent.address, templateJob(jobId, 'false'));

    // Find it by prefix, with its summary.
    const list = await api<JobListStub[]>(agent.address, 'GET', '/v1/jobs?prefix=template-0');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.map((j) => j.ID), [jobId]);
    assert.ok(list.body[0]!.JobSummary, 'JobSummary in list stub');
    assert.ok('default-group' in list.body[0]!.JobSummary!.Summary);
    assert.equal((await api(agent.address, 'GET', '/v1/jobs?prefix=nothing-')).body instanceof Array, true);
    const sum = await api<JobSummary>(agent.address, 'GET', `/v1/job/${jobId}/summary`);
    assert.equal(sum.status, 200, sum.text);
    assert.equal(sum.body.JobID, jobId);
    assert.deepEqual(Object.keys(sum.body.Summary).sort(), ['config', 'default-group']);

    // The event stream shows the allocation going pending → running.
    const reg = await watch.waitFor('JobRegistered', (e) => e.Topic === 'Job' && e.Type === 'JobRegistered' && e.Key === jobId);
    assert.equal((reg.Payload as { Job: Job }).Job.ID, jobId);
    const running = await watch.waitFor('alloc running', (e) => e.Topic === 'Allocation' && (e.Payload as { Allocation: Allocation }).Allocation.JobID === jobId && (e.Payload as { Allocation: Allocation }).Allocation.ClientStatus === 'running');
    const allocId = running.Key;
    const allocEvents = watch.events.filter((e) => e.Topic === 'Allocation' && e.Key === allocId);
    const statuses = allocEvents.map((e) => (e.Payload as { Allocation: Allocation }).Allocation.ClientStatus);
    assert.equal(statuses[0], 'pending', `first status: ${statuses.join(',')}`);
    assert.ok(statuses.indexOf('running') > statuses.indexOf('pending'));
    const runAlloc = (running.Payload as { Allocation: Allocation }).Allocation;
    assert.equal(running.Type, 'AllocationUpdated');
    assert.equal(runAlloc.DesiredStatus, 'run');
    assert.ok('PreviousAllocation' in runAlloc && 'NextAllocation' in runAlloc, 'Previous/NextAllocation present');
    const ts = runAlloc.TaskStates?.['default-task'];
    assert.ok(ts, 'TaskStates carried');
    assert.equal(ts.State, 'running');
    assert.ok((ts.Events ?? []).some((e) => e.Type === 'Started'), 'task events carried');
    const startedAt = ts.StartedAt;
    assert.ok(startedAt);

    // The node holding it reports where its HTTP API is and that it is ready.
    const node = await api<{ HTTPAddr: string; Status: string }>(agent.address, 'GET', `/v1/node/${runAlloc.NodeID}`);
    assert.equal(node.status, 200, node.text);
    assert.equal(node.body.Status, 'ready');
    assert.match(node.body.HTTPAddr, /^127\.0\.0\.1:\d+$/);

    // Exec without a terminal: stdout, stderr and the exit code arrive separately.
    const plain = await execFrames(agent.address, allocId, { task: 'default-task', command: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'] });
    assert.equal(plain.stdout, 'out\n');
    assert.equal(plain.stderr, 'err\n');
    assert.equal(plain.exitCode, 3);
    assert.ok(plain.frames.some((f) => 'stdout' in f) && plain.frames.some((f) => 'stderr' in f));

    // Exec with a terminal and stdin: the shell echoes what is typed and runs it.
    const tty = await execFrames(agent.address, allocId, {
      task: 'default-task',
      command: ['/bin/sh'],
      tty: true,
      size: { height: 24, width: 80 },
      stdin: ['echo typed-$((20+22))\n', 'exit 0\n'],
      delayMs: 100,
      closeStdin: false,
    });
    assert.equal(tty.exitCode, 0, JSON.stringify(tty));
    assert.match(tty.stdout, /echo typed-\$\(\(20\+22\)\)/, 'terminal echo of the input');
    assert.match(tty.stdout, /typed-42/);
    assert.equal(tty.stderr, '', 'a terminal merges stderr into stdout');

    // Re-register with changed meta in the config group only: same alloc, same start, new version.
    const before = await api<Job>(agent.address, 'GET', `/v1/job/${jobId}`);
    await register(agent.address, templateJob(jobId, 'true'));
    const updated = await waitUntil('alloc moved to the new job version', async () => {
      const a = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${allocId}`);
      return a.body.Job && a.body.Job.Version > before.body.Version ? a.body : undefined;
    });
    assert.equal(updated.ClientStatus, 'running');
    assert.equal(updated.DesiredStatus, 'run');
    assert.equal(updated.TaskStates?.['default-task']?.StartedAt, startedAt, 'task not restarted');
    assert.equal(updated.TaskStates?.['default-task']?.Restarts ?? 0, 0);
    assert.equal(updated.Job?.TaskGroups.find((g) => g.Name === 'config')?.Meta?.used, 'true');
    const allocs = await api<AllocListStub[]>(agent.address, 'GET', `/v1/job/${jobId}/allocations`);
    assert.deepEqual(allocs.body.map((a) => a.ID), [allocId], 'no replacement allocation');

    // Stop and purge: the deregistration event, the job is gone and the task ends.
    const del = await api<{ EvalID: string }>(agent.address, 'DELETE', `/v1/job/${jobId}?purge=true`);
    assert.equal(del.status, 200, del.text);
    await watch.waitFor('JobDeregistered', (e) => e.Topic === 'Job' && e.Type === 'JobDeregistered' && e.Key === jobId);
    assert.equal((await api(agent.address, 'GET', `/v1/job/${jobId}`)).status, 404);
    const ended = await watch.waitFor('alloc tasks end', (e) => {
      if (e.Topic !== 'Allocation' || e.Key !== allocId) return false;
      const a = (e.Payload as { Allocation: Allocation }).Allocation;
      return a.ClientStatus === 'complete' && a.TaskStates?.['default-task']?.State === 'dead';
    });
    assert.equal((ended.Payload as { Allocation: Allocation }).Allocation.DesiredStatus, 'stop');
  } finally {
    watch.close();
    await agent.stop();
    await agent.cleanup();
  }
});

test('a batch job of one group count 1 running sleep infinity stays running until stopped', async () => {
  const agent = await devAgent();
  try {
    const job = {
      ID: 'sleeper',
      Type: 'batch',
      Datacenters: ['dc1'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sleep', args: ['infinity'] }, Resources: { CPU: 50, MemoryMB: 32 } }] }],
    };
    await register(agent.address, job);
    const alloc = await waitUntil('sleeper running', async () => {
      const l = await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/sleeper/allocations');
      return l.body.find((a) => a.ClientStatus === 'running');
    });
    // Give a short-lived task time to have ended, then check it has not.
    await new Promise((r) => setTimeout(r, 1500));
    const still = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${alloc.ID}`);
    assert.equal(still.body.ClientStatus, 'running');
    assert.equal(still.body.TaskStates?.t?.State, 'running');
    const summary = await api<JobSummary>(agent.address, 'GET', '/v1/job/sleeper/summary');
    assert.equal(summary.body.Summary.g?.Running, 1);

    await api(agent.address, 'DELETE', '/v1/job/sleeper');
    const stopped = await waitUntil('sleeper stopped', async () => {
      const a = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${alloc.ID}`);
      return a.body.ClientStatus !== 'running' ? a.body : undefined;
    });
    assert.equal(stopped.DesiredStatus, 'stop');
    assert.equal(stopped.ClientStatus, 'complete');
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
