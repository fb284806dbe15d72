/**
 * Host volumes with a real dev agent and real exec tasks: the client's host_volume blocks are
 * fingerprinted into the node, a stateful job keeps its data across a stop and a new run on the
 * same node, a read_only mount refuses writes, and a job asking for a volume no node offers stays
 * unplaced with Nomad's reason.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Allocation, Evaluation, Node } from '../../src/structs/index.js';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { getAlloc, jobAllocs, runJob, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

let agent: AgentProcess;
let dataDir: string;
let jobsDir: string;
let stateDir: string;
let roDir: string;

function job(name: string, opts: { script: string; volume: string; groupReadOnly?: boolean; mountReadOnly?: boolean; type?: 'batch' | 'service' }): string {
  return `
job "${name}" {
  datacenters = ["dc1"]
  type        = "${opts.type ?? 'batch'}"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type      = "host"
      source    = "${opts.volume}"
      read_only = ${opts.groupReadOnly ?? false}
    }
    task "t" {
      driver = "exec"
      volume_mount {
        volume      = "data"
        destination = "/data"
        read_only   = ${opts.mountReadOnly ?? false}
      }
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(opts.script)}]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;
}

async function finished(jobId: string, after: string[] = []): Promise<Allocation> {
  const stub = await waitFor(
    `a terminal alloc of ${jobId}`,
    async () => (await jobAllocs(agent.address, jobId)).find((a) => !after.includes(a.ID) && (a.ClientStatus === 'complete' || a.ClientStatus === 'failed')),
    60_000,
  );
  return getAlloc(agent.address, stub.ID);
}

async function stdout(allocId: string): Promise<string> {
  return (await api(agent.address, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout&plain=true`)).text;
}

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  jobsDir = await mkdtemp('/tmp/cv-hv-');
  stateDir = join(jobsDir, 'state');
  roDir = join(jobsDir, 'ro');
  await mkdir(stateDir);
  await mkdir(roDir);
  // exec tasks run as nobody: the operator makes the volume writable for them.
  await chmod(stateDir, 0o777);
  await writeFile(join(roDir, 'seed'), 'seeded\n');
  const config = join(jobsDir, 'agent.hcl');
  await writeFile(config, `client {\n  host_volume "state" {\n    path = "${stateDir}"\n  }\n  host_volume "ro" {\n    path      = "${roDir}"\n    read_only = true\n  }\n}\n`);
  agent = await startAgent({ roleArgs: ['-dev', '-config', config], dataDir });
});

after(async () => {
  await agent?.kill().catch(() => {});
  await teardown(agent, dataDir);
  await rm(jobsDir, { recursive: true, force: true });
});

test('the client fingerprints its host volumes into Node.HostVolumes', async () => {
  const id = await waitFor('the node to register', async () => (await api<Node[]>(agent.address, 'GET', '/v1/nodes')).body[0]?.ID);
  const node = (await api<Node>(agent.address, 'GET', `/v1/node/${id}`)).body;
  assert.deepEqual(node.HostVolumes, {
    state: { Name: 'state', Path: stateDir, ReadOnly: false },
    ro: { Name: 'ro', Path: roDir, ReadOnly: true },
  });
  const status = await runCli(agent.address, ['node', 'status', id]);
  assert.match(status.stdout, /^Host Volumes\s+= ro,state$/m);
});

test('a stateful job writes to its host volume, is stopped, runs again on the same node and reads its data back', async () => {
  const token = `gen-${process.pid}-${Date.now()}`;
  // A service that keeps its state on the volume and then serves (sleeps).
  const writer = job('stateful', { type: 'service', volume: 'state', script: `echo ${token} > /data/value && echo wrote && exec sleep 600` });
  await runJob(agent.address, jobsDir, 'stateful', writer);
  const [first] = await waitRunning(agent.address, 'stateful', 1, 60_000);
  await waitFor('the task to write its state', async () => ((await stdout(first!.ID)).includes('wrote') ? true : undefined));
  assert.equal((await readFile(join(stateDir, 'value'), 'utf8')).trim(), token, 'the data is on the host volume');

  const stop = await runCli(agent.address, ['job', 'stop', '-detach', 'stateful']);
  assert.equal(stop.code, 0, stop.stderr);
  await waitFor('the allocation to stop', async () => ((await getAlloc(agent.address, first!.ID)).ClientStatus === 'complete' ? true : undefined), 60_000);

  // Run again: a new allocation, placed where the volume is, reading what the first one wrote.
  await runJob(agent.address, jobsDir, 'stateful', job('stateful', { type: 'service', volume: 'state', script: 'cat /data/value && exec sleep 600' }));
  const second = await waitFor('a new running allocation', async () => (await jobAllocs(agent.address, 'stateful')).find((a) => a.ID !== first!.ID && a.ClientStatus === 'running'), 60_000);
  assert.equal(second.NodeID, first!.NodeID);
  await waitFor('the new allocation to read the state back', async () => ((await stdout(second.ID)).trim() === token ? true : undefined));
  const stopAgain = await runCli(agent.address, ['job', 'stop', '-detach', 'stateful']);
  assert.equal(stopAgain.code, 0, stopAgain.stderr);
});

test('a read_only mount refuses writes and still reads', async () => {
  const script = 'cat /data/seed; echo x > /data/new 2>/dev/null && echo WROTE || echo write-refused';
  await runJob(agent.address, jobsDir, 'reader', job('reader', { volume: 'ro', groupReadOnly: true, mountReadOnly: true, script }));
  const alloc = await finished('reader');
  assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(alloc.TaskStates?.['t']?.Events));
  const out = await stdout(alloc.ID);
  assert.match(out, /^seeded$/m);
  assert.match(out, /^write-refused$/m);
  assert.doesNotMatch(out, /WROTE/);
  await assert.rejects(readFile(join(roDir, 'new')), /ENOENT/);
});

test('a job asking for a host volume no node has stays unplaced with Nomad\'s reason', async () => {
  await runJob(agent.address, jobsDir, 'nowhere', job('nowhere', { volume: 'no-such-volume', script: 'echo ran' }));
  const failed = await waitFor('the evaluation to fail placement', async () => {
    const evals = (await api<Evaluation[]>(agent.address, 'GET', '/v1/job/nowhere/evaluations')).body;
    return evals.find((e) => e.FailedTGAllocs?.['g']);
  });
  const metric = failed.FailedTGAllocs!['g']!;
  assert.deepEqual(metric.ConstraintFiltered, { 'missing compatible host volumes': 1 });
  assert.equal(metric.NodesFiltered, 1);
  assert.deepEqual(await jobAllocs(agent.address, 'nowhere'), []);
});
