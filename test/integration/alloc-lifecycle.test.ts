import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AllocListStub, Allocation, Node } from '../../src/structs/index.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { execFrames, waitUntil, watchEvents } from './helpers/poseidon-client.js';

const SCRIPT = 'trap "echo got-usr1 >> ${NOMAD_TASK_DIR:-.}/sig" USR1; echo started; while true; do sleep 0.1; done';

function serviceJob(id: string): Record<string, unknown> {
  return {
    ID: id,
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'g',
        Count: 1,
        RestartPolicy: { Attempts: 5, Interval: 3_600_000_000_000, Delay: 100_000_000, Mode: 'fail' },
        Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', SCRIPT] }, Resources: { CPU: 50, MemoryMB: 32 } }],
      },
    ],
  };
}

async function runningAlloc(address: string, jobId: string, not: string[] = []): Promise<AllocListStub> {
  return waitUntil(`a running alloc of ${jobId}`, async () => {
    const l = await api<AllocListStub[]>(address, 'GET', `/v1/job/${jobId}/allocations`);
    return l.body.find((a) => a.ClientStatus === 'running' && !not.includes(a.ID));
  });
}

test('alloc lifecycle through a dev agent: signal, restart, stats, fs confinement, stop → replacement', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  try {
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: serviceJob('life') });
    assert.equal(reg.status, 200, reg.text);
    const first = await runningAlloc(agent.address, 'life');
    const id = first.ID;

    // Signal: the task's USR1 trap writes a file in its task dir.
    const sig = await api(agent.address, 'POST', `/v1/client/allocation/${id}/signal`, { Task: 't', Signal: 'SIGUSR1' });
    assert.equal(sig.status, 200, sig.text);
    const sigFile = await waitUntil('USR1 trap ran', async () => {
      const r = await execFrames(agent.address, id, { task: 't', command: ['/bin/sh', '-c', 'cat "${NOMAD_TASK_DIR:-.}/sig" 2>/dev/null'] });
      return r.stdout.includes('got-usr1') ? r.stdout : undefined;
    });
    assert.match(sigFile, /got-usr1/);
    const badSig = await api(agent.address, 'POST', `/v1/client/allocation/${id}/signal`, { Task: 't', Signal: 'SIGNOPE' });
    assert.ok(badSig.status >= 400 && badSig.status < 500, `bad signal: ${badSig.status}`);

    // Restart: Restarts + 1 and a "Restart Signaled" event, same allocation.
    const before = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${id}`);
    const restarts = before.body.TaskStates?.t?.Restarts ?? 0;
    const rs = await api(agent.address, 'POST', `/v1/client/allocation/${id}/restart`, { TaskName: 't' });
    assert.equal(rs.status, 200, rs.text);
    const after = await waitUntil('task restarted and running', async () => {
      const a = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${id}`);
      const ts = a.body.TaskStates?.t;
      return ts && ts.Restarts === restarts + 1 && ts.State === 'running' ? a.body : undefined;
    });
    const types = (after.TaskStates?.t?.Events ?? []).map((e) => e.Type);
    assert.ok(types.includes('Restart Signaled'), `events: ${types.join(', ')}`);
    assert.equal(after.ClientStatus, 'running');

    // Stats: numbers for the allocation and its task.
    const stats = await api<{ ResourceUsage: { MemoryStats: Record<string, number>; CpuStats: Record<string, number> }; Tasks: Record<string, unknown>; Timestamp: number }>(agent.address, 'GET', `/v1/client/allocation/${id}/stats`);
    assert.equal(stats.status, 200, stats.text);
    assert.equal(typeof stats.body.ResourceUsage.MemoryStats.RSS, 'number');
    assert.equal(typeof stats.body.ResourceUsage.CpuStats.Percent, 'number');
    assert.ok('t' in stats.body.Tasks);
    assert.equal(typeof stats.body.Timestamp, 'number');

    // The fs API stays inside the allocation directory: `..` and symlinks out are refused.
    const ls = await api<{ Name: string }[]>(agent.address, 'GET', `/v1/client/fs/ls/${id}?path=/`);
    assert.equal(ls.status, 200, ls.text);
    assert.ok(ls.body.some((f) => f.Name === 't'), `alloc dir: ${ls.text}`);
    for (const path of ['../../../../etc/passwd', '/../../etc/passwd', 't/../../../etc/passwd']) {
      const r = await api(agent.address, 'GET', `/v1/client/fs/cat/${id}?path=${encodeURIComponent(path)}`);
      assert.ok(r.status >= 400 && r.status < 500, `cat ${path}: ${r.status} ${r.text.slice(0, 80)}`);
    }
    const ln = await execFrames(agent.address, id, { task: 't', command: ['/bin/sh', '-c', 'ln -s /etc/passwd escape-link && ln -s /etc escape-dir && pwd'] });
    assert.equal(ln.exitCode, 0, ln.stderr);
    const lsTask = await api<{ Name: string }[]>(agent.address, 'GET', `/v1/client/fs/ls/${id}?path=t`);
    assert.ok(lsTask.body.some((f) => f.Name === 'escape-link'), `the link is in the task dir: ${lsTask.text} (exec cwd ${ln.stdout})`);
    for (const [kind, path] of [['cat', 't/escape-link'], ['cat', 't/escape-dir/passwd'], ['ls', 't/escape-dir'], ['stat', 't/escape-link'], ['readat', 't/escape-link']] as const) {
      const extra = kind === 'readat' ? '&offset=0&limit=10' : '';
      const r = await api(agent.address, 'GET', `/v1/client/fs/${kind}/${id}?path=${encodeURIComponent(path)}${extra}`);
      assert.ok(r.status >= 400 && r.status < 500, `${kind} ${path}: ${r.status} ${r.text.slice(0, 80)}`);
    }

    // Stop: the allocation stops and the scheduler places a replacement.
    const stop = await api<{ EvalID: string; Index: number }>(agent.address, 'POST', `/v1/allocation/${id}/stop`);
    assert.equal(stop.status, 200, stop.text);
    assert.ok(stop.body.EvalID);
    const replacement = await runningAlloc(agent.address, 'life', [id]);
    assert.notEqual(replacement.ID, id);
    const old = await waitUntil('old alloc stopped', async () => {
      const a = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${id}`);
      return a.body.ClientStatus !== 'running' ? a.body : undefined;
    });
    assert.equal(old.DesiredStatus, 'stop');
    const repl = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${replacement.ID}`);
    assert.equal(repl.body.PreviousAllocation, id);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('alloc stop -no-shutdown-delay kills the tasks without waiting their shutdown_delay', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  const a = agent.address;
  try {
    const job = serviceJob('nodelay');
    const group = (job.TaskGroups as { Tasks: Record<string, unknown>[] }[])[0]!;
    // An hour's delay: without the flag the task would still be running long after the test.
    group.Tasks[0]!.ShutdownDelay = 3_600_000_000_000;
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: job })).status, 200);
    const alloc = await runningAlloc(a, 'nodelay');
    const bad = await api(a, 'PUT', `/v1/allocation/${alloc.ID}/stop?no_shutdown_delay=maybe`);
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /no_shutdown_delay/);
    assert.equal((await api<Allocation>(a, 'GET', `/v1/allocation/${alloc.ID}`)).body.DesiredStatus, 'run', 'a refused stop changes nothing');

    const stop = await runCli(a, ['alloc', 'stop', '-no-shutdown-delay', alloc.ID]);
    assert.equal(stop.code, 0, stop.stderr);
    const taskDead = (id: string, what: string) =>
      waitUntil(what, async () => {
        const al = (await api<Allocation>(a, 'GET', `/v1/allocation/${id}`)).body;
        return al.TaskStates?.['t']?.State === 'dead' ? al : undefined;
      }, 30_000);
    const stopped = await taskDead(alloc.ID, 'the task killed at once');
    assert.equal(stopped.DesiredTransition?.NoShutdownDelay, true);
    assert.equal(stopped.DesiredStatus, 'stop');

    // A plain job stop waits out the replacement's delay; job stop -no-shutdown-delay then cuts
    // the wait short (the allocations of the job are marked even while they stop).
    const replacement = await runningAlloc(a, 'nodelay', [alloc.ID]);
    assert.equal((await runCli(a, ['job', 'stop', '-detach', 'nodelay'])).code, 0);
    const waiting = await waitUntil('the replacement waiting out its delay', async () => {
      const al = (await api<Allocation>(a, 'GET', `/v1/allocation/${replacement.ID}`)).body;
      return al.TaskStates?.['t']?.Events.find((e) => e.Type === 'Waiting for shutdown delay');
    }, 30_000);
    assert.equal(waiting.DisplayMessage, 'Waiting for shutdown_delay of 1h0m0s before killing the task.');
    const jobStop = await runCli(a, ['job', 'stop', '-detach', '-no-shutdown-delay', 'nodelay']);
    assert.equal(jobStop.code, 0, jobStop.stderr);
    const gone = await taskDead(replacement.ID, 'the replacement killed at once');
    assert.equal(gone.DesiredTransition?.NoShutdownDelay, true);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('event stream: node payloads carry no SecretID; allocation payloads carry Nomad fields', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  const watch = await watchEvents(agent.address, 'index=0');
  try {
    const node = await watch.waitFor('NodeRegistration', (e) => e.Topic === 'Node' && e.Type === 'NodeRegistration');
    const n = (node.Payload as { Node: Node }).Node;
    assert.ok(n.ID);
    assert.equal(n.SecretID ?? '', '', 'SecretID sanitized');
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: serviceJob('ev') });
    assert.equal(reg.status, 200, reg.text);
    const ev = await watch.waitFor('alloc running', (e) => e.Topic === 'Allocation' && (e.Payload as { Allocation: Allocation }).Allocation.ClientStatus === 'running');
    const a = (ev.Payload as { Allocation: Allocation }).Allocation;
    for (const k of ['ClientStatus', 'DesiredStatus', 'TaskStates', 'PreviousAllocation', 'NextAllocation'] as const) assert.ok(k in a, `${k} in payload`);
    assert.ok(ev.FilterKeys?.includes('ev'), 'job ID among FilterKeys');
    for (const e of watch.events) {
      if (e.Topic === 'Node') assert.equal((e.Payload as { Node: Node }).Node.SecretID ?? '', '', `${e.Type} leaks SecretID`);
    }
  } finally {
    watch.close();
    await agent.stop();
    await agent.cleanup();
  }
});
