/**
 * The docker driver end to end: real `caravan agent` processes whose client talks to a private
 * dockerd this file starts (plugin "docker" { config { endpoint = … } }), running jobs shaped
 * like Poseidon's execution environments.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allocation, TaskEvent } from '../../src/structs/index.js';
import { BUSYBOX_IMAGE, importBusybox, listContainers, startPrivateDockerd, type PrivateDockerd } from '../drivers/private-dockerd.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { execFrames, waitUntil } from './helpers/poseidon-client.js';

let dockerd: PrivateDockerd;
let confDir: string;

before(async () => {
  dockerd = await startPrivateDockerd();
  await importBusybox(dockerd);
  confDir = mkdtempSync(join(tmpdir(), 'caravan-docker-conf-'));
  writeFileSync(join(confDir, 'docker.hcl'), `plugin "docker" {\n  config {\n    endpoint = "${dockerd.endpoint}"\n    allow_runtimes = ["runc", "runsc"]\n    gc {\n      image = false\n    }\n  }\n}\n`);
});

after(async () => {
  await dockerd?.stop();
  rmSync(confDir, { recursive: true, force: true });
});

function devAgent(opts: { dataDir?: string; port?: number } = {}): Promise<AgentProcess> {
  return startAgent({ roleArgs: ['-dev'], extraArgs: ['-config', join(confDir, 'docker.hcl')], ...opts });
}

/** Poseidon's template job: a count-0 "config" group with meta, one runner task kept alive by sleep. */
function poseidonJob(id: string, used: string, task: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Type: 'batch',
    Datacenters: ['dc1'],
    TaskGroups: [
      { Name: 'config', Count: 0, Meta: { used, prewarmingPoolSize: '1' }, Tasks: [{ Name: 'config', Driver: 'docker', Config: { image: BUSYBOX_IMAGE, command: 'true' }, Resources: { CPU: 10, MemoryMB: 10 } }] },
      {
        Name: 'default-group',
        Count: 1,
        RestartPolicy: { Attempts: 3, Interval: 3_600_000_000_000, Delay: 1_000_000_000, Mode: 'fail' },
        Tasks: [
          {
            Name: 'default-task',
            Driver: 'docker',
            Config: { image: BUSYBOX_IMAGE, command: 'sleep', args: ['infinity'], network_mode: 'none' },
            KillSignal: 'SIGKILL',
            KillTimeout: 0,
            LogConfig: { MaxFiles: 1, MaxFileSizeMB: 1 },
            Resources: { CPU: 20, MemoryMB: 32 },
            ...task,
          },
        ],
      },
    ],
  };
}

async function register(address: string, job: Record<string, unknown>): Promise<void> {
  const res = await api(address, 'PUT', '/v1/jobs', { Job: job });
  assert.equal(res.status, 200, res.text);
}

async function allocsOf(address: string, jobId: string): Promise<Allocation[]> {
  const res = await api<Allocation[]>(address, 'GET', `/v1/job/${jobId}/allocations`);
  assert.equal(res.status, 200, res.text);
  return res.body;
}

function runningAlloc(address: string, jobId: string): Promise<Allocation> {
  return waitUntil(`a running alloc of ${jobId}`, async () => (await allocsOf(address, jobId)).find((a) => a.ClientStatus === 'running' && a.TaskStates?.['default-task']?.State === 'running'), 30_000);
}

async function containersOf(allocId: string) {
  return (await listContainers(dockerd)).filter((c) => c.Labels['com.hashicorp.nomad.alloc_id'] === allocId);
}

function events(a: Allocation): TaskEvent[] {
  return a.TaskStates?.['default-task']?.Events ?? [];
}

test('docker: a Poseidon-shaped job runs; exec; meta-only update keeps the container; agent kill -9 reattaches; stop removes it', async () => {
  let agent = await devAgent();
  try {
    const jobId = 'template-0-runner-docker';
    await register(agent.address, poseidonJob(jobId, 'false'));
    const alloc = await runningAlloc(agent.address, jobId);
    const [c] = await containersOf(alloc.ID);
    assert.ok(c, 'the task runs as a container labelled with its alloc');
    assert.equal(c.State, 'running');
    assert.equal(c.Labels['com.hashicorp.nomad.task_name'], 'default-task');
    assert.deepEqual(c.Names, [`/default-task-${alloc.ID}`]);

    // Exec without a tty: stdout, stderr and the exit code apart.
    const plain = await execFrames(agent.address, alloc.ID, { task: 'default-task', command: ['sh', '-c', 'echo out; echo err >&2; exit 3'] });
    assert.deepEqual({ stdout: plain.stdout, stderr: plain.stderr, code: plain.exitCode }, { stdout: 'out\n', stderr: 'err\n', code: 3 });
    // With a tty: the terminal echoes stdin.
    const tty = await execFrames(agent.address, alloc.ID, { task: 'default-task', command: ['cat'], tty: true, size: { height: 24, width: 80 }, stdin: ['hello tty\n'] });
    assert.match(tty.stdout, /hello tty\r\n/);
    assert.equal(tty.exitCode, 0);
    // What the container's main process writes reaches the task's log files (alloc logs, fs API).
    await execFrames(agent.address, alloc.ID, { task: 'default-task', command: ['sh', '-c', 'echo to-pid1-stdout > /proc/1/fd/1; echo to-pid1-stderr > /proc/1/fd/2'] });
    const logs = await waitUntil('the container output in alloc/logs', async () => {
      const r = await api(agent.address, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent('alloc/logs/default-task.stdout.0')}`);
      return r.status === 200 && r.text.includes('to-pid1-stdout') ? r.text : undefined;
    });
    assert.equal(logs, 'to-pid1-stdout\n');
    const errLog = await api(agent.address, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent('alloc/logs/default-task.stderr.0')}`);
    assert.equal(errLog.text, 'to-pid1-stderr\n');
    // The container has no network.
    const net = await execFrames(agent.address, alloc.ID, { task: 'default-task', command: ['sh', '-c', 'ls /sys/class/net'] });
    assert.equal(net.stdout.trim(), 'lo');

    // Re-registering with only the config group's meta changed keeps the very same container.
    await register(agent.address, poseidonJob(jobId, 'true'));
    await waitUntil('the alloc on the new job version', async () => {
      const a = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${alloc.ID}`);
      return a.body.Job?.TaskGroups?.find((g) => g.Name === 'config')?.Meta?.['used'] === 'true';
    });
    await new Promise((r) => setTimeout(r, 500));
    const after = await containersOf(alloc.ID);
    assert.deepEqual(after.map((x) => [x.Id, x.State]), [[c.Id, 'running']], 'same container, still running');
    assert.equal((await allocsOf(agent.address, jobId)).filter((a) => a.ClientStatus === 'running').length, 1);

    // kill -9 of the agent, then a restart on the same data dir: the container is reattached.
    const { dataDir, port } = agent;
    await agent.kill();
    assert.deepEqual((await containersOf(alloc.ID)).map((x) => x.State), ['running'], 'the container outlives the agent');
    agent = await devAgent({ dataDir, port });
    const again = await runningAlloc(agent.address, jobId);
    assert.equal(again.ID, alloc.ID);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.deepEqual((await containersOf(alloc.ID)).map((x) => x.Id), [c.Id], 'reattached, never duplicated');
    const post = await execFrames(agent.address, alloc.ID, { task: 'default-task', command: ['echo', 'still here'] });
    assert.equal(post.stdout, 'still here\n');

    // Stopping the job removes the container.
    const stop = await api(agent.address, 'DELETE', `/v1/job/${jobId}`);
    assert.equal(stop.status, 200, stop.text);
    await waitUntil('the container removed', async () => (await containersOf(alloc.ID)).length === 0, 30_000);
  } finally {
    await agent.kill();
    await agent.cleanup();
  }
});

test('docker: a memory hog is reported OOM-killed; a missing image fails the alloc with a clear event', async () => {
  const agent = await devAgent();
  try {
    const noRestart = { Attempts: 0, Interval: 3_600_000_000_000, Delay: 1_000_000_000, Mode: 'fail' };
    const hog = poseidonJob('oom-hog', 'false', { Config: { image: BUSYBOX_IMAGE, command: 'dd', args: ['if=/dev/zero', 'of=/dev/null', 'bs=200M', 'count=1'], network_mode: 'none' } });
    (hog.TaskGroups as Array<Record<string, unknown>>)[1]!.RestartPolicy = noRestart;
    await register(agent.address, hog);
    const dead = await waitUntil('the hog alloc failed', async () => (await allocsOf(agent.address, 'oom-hog')).find((a) => a.ClientStatus === 'failed'), 30_000);
    const term = events(dead).find((e) => e.Type === 'Terminated');
    assert.ok(term, JSON.stringify(events(dead)));
    assert.equal(term.ExitCode, 137);
    assert.equal(term.Message, 'OOM Killed');
    assert.equal(term.Details?.['oom_killed'], 'true');

    const missing = poseidonJob('no-image', 'false', { Config: { image: 'caravan-missing-image:1', command: 'sleep', args: ['infinity'], network_mode: 'none' } });
    (missing.TaskGroups as Array<Record<string, unknown>>)[1]!.RestartPolicy = noRestart;
    await register(agent.address, missing);
    const failed = await waitUntil('the missing-image alloc failed', async () => (await allocsOf(agent.address, 'no-image')).find((a) => a.ClientStatus === 'failed'), 30_000);
    const evs = events(failed);
    assert.ok(evs.some((e) => e.Type === 'Driver' && e.DriverMessage === 'Downloading image'), JSON.stringify(evs));
    const df = evs.find((e) => e.Type === 'Driver Failure');
    assert.match(df?.DriverError ?? '', /Failed to pull `caravan-missing-image:1`/);
    assert.deepEqual(await containersOf(failed.ID), []);
  } finally {
    await agent.kill();
    await agent.cleanup();
  }
});

test('docker: the node fingerprints driver.docker from the engine; refused config names the option', async () => {
  const agent = await devAgent();
  try {
    const nodeId = await waitUntil('the node registered', async () => (await api<Array<{ ID: string }>>(agent.address, 'GET', '/v1/nodes')).body[0]?.ID);
    const node = await api<{ Attributes: Record<string, string>; Drivers: Record<string, { Detected: boolean; Healthy: boolean }> }>(agent.address, 'GET', `/v1/node/${nodeId}`);
    assert.equal(node.body.Attributes['driver.docker'], '1');
    assert.match(node.body.Attributes['driver.docker.version'] ?? '', /^\d+\./);
    assert.match(node.body.Attributes['driver.docker.runtimes'] ?? '', /runc/);
    assert.equal(node.body.Drivers['docker']?.Healthy, true);

    const bad = poseidonJob('privileged', 'false', { Config: { image: BUSYBOX_IMAGE, command: 'sleep', args: ['infinity'], privileged: true } });
    (bad.TaskGroups as Array<Record<string, unknown>>)[1]!.RestartPolicy = { Attempts: 0, Interval: 3_600_000_000_000, Delay: 1_000_000_000, Mode: 'fail' };
    await register(agent.address, bad);
    const failed = await waitUntil('the privileged alloc failed', async () => (await allocsOf(agent.address, 'privileged')).find((a) => a.ClientStatus === 'failed'), 30_000);
    const df = events(failed).find((e) => e.Type === 'Driver Failure');
    assert.match(df?.DriverError ?? '', /"privileged" is not allowed/);
  } finally {
    await agent.kill();
    await agent.cleanup();
  }
});

test('docker: a container that ends while the agent is down reports its exit code after the restart', async () => {
  let agent = await devAgent();
  try {
    const job = poseidonJob('ends-while-down', 'false');
    (job.TaskGroups as Array<Record<string, unknown>>)[1]!.RestartPolicy = { Attempts: 0, Interval: 3_600_000_000_000, Delay: 1_000_000_000, Mode: 'fail' };
    await register(agent.address, job);
    const alloc = await runningAlloc(agent.address, 'ends-while-down');
    const [c] = await containersOf(alloc.ID);
    const { dataDir, port } = agent;
    await agent.kill();
    // The container is killed while no agent watches it.
    const { engineCall } = await import('../drivers/private-dockerd.js');
    await engineCall(dockerd.socket, 'POST', `/containers/${c!.Id}/kill?signal=SIGKILL`);
    await waitUntil('the container exited', async () => (await containersOf(alloc.ID))[0]?.State === 'exited');
    agent = await devAgent({ dataDir, port });
    const failed = await waitUntil('the alloc failed with the exit code', async () => (await allocsOf(agent.address, 'ends-while-down')).find((a) => a.ID === alloc.ID && a.ClientStatus === 'failed'), 30_000);
    const term = events(failed).find((e) => e.Type === 'Terminated');
    assert.equal(term?.ExitCode, 137, JSON.stringify(events(failed)));
    // The dead task's container is removed, not restarted.
    await waitUntil('the container removed', async () => (await containersOf(alloc.ID)).length === 0, 30_000);
  } finally {
    await agent.kill();
    await agent.cleanup();
  }
});

test('docker: an engine that comes up after the agent is detected by the periodic fingerprint', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cvd-'));
  const link = join(dir, 'late.sock');
  writeFileSync(join(dir, 'late.hcl'), `plugin "docker" {\n  config {\n    endpoint = "unix://${link}"\n  }\n}\n`);
  const agent = await startAgent({ roleArgs: ['-dev'], extraArgs: ['-config', join(dir, 'late.hcl')] });
  try {
    type NodeView = { Attributes: Record<string, string>; Drivers: Record<string, { Detected: boolean; HealthDescription: string }> };
    const nodeId = await waitUntil('the node registered', async () => (await api<Array<{ ID: string }>>(agent.address, 'GET', '/v1/nodes')).body[0]?.ID);
    const first = (await api<NodeView>(agent.address, 'GET', `/v1/node/${nodeId}`)).body;
    assert.equal(first.Attributes['driver.docker'], undefined);
    assert.equal(first.Drivers['docker']?.Detected, false);
    assert.match(first.Drivers['docker']?.HealthDescription ?? '', /Failed to connect to docker daemon/);
    const { symlinkSync } = await import('node:fs');
    symlinkSync(dockerd.socket, link);
    const later = await waitUntil(
      'driver.docker on the node',
      async () => {
        const n = (await api<NodeView>(agent.address, 'GET', `/v1/node/${nodeId}`)).body;
        return n.Attributes['driver.docker'] === '1' ? n : undefined;
      },
      40_000,
    );
    assert.equal(later.Drivers['docker']?.Detected, true);
  } finally {
    await agent.kill();
    await agent.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});
