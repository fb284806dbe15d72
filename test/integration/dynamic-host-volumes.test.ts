/**
 * Nomad 1.10's dynamic host volumes with a real dev agent and real exec tasks: `caravan volume
 * create` makes a directory with the built-in mkdir plugin under the agent's host_volumes_dir,
 * the node fingerprints it (the volume turns ready), a job mounts it by name and writes, is
 * stopped and run again and reads its data back on the same node; a delete is refused while an
 * allocation claims the volume and removes the directory once none does.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HostVolume, HostVolumeStub } from '../../src/structs/dynamic-host-volume.js';
import type { Node } from '../../src/structs/index.js';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { getAlloc, jobAllocs, runJob, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

let agent: AgentProcess;
let dataDir: string;
let jobsDir: string;

const job = (script: string) => `
job "stateful" {
  datacenters = ["dc1"]
  type        = "service"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type   = "host"
      source = "counter-data"
    }
    task "t" {
      driver = "exec"
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

const SPEC = `
type      = "host"
name      = "counter-data"
plugin_id = "mkdir"
capacity_min = "10MiB"
capacity_max = "1GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

constraint {
  attribute = "\${attr.kernel.name}"
  value     = "linux"
}

# exec tasks run as nobody: the volume is made writable for them.
parameters {
  mode = "0777"
}
`;

async function stdout(allocId: string): Promise<string> {
  return (await api(agent.address, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout&plain=true`)).text;
}

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  jobsDir = await mkdtemp('/tmp/cv-dhv-');
  agent = await startAgent({ roleArgs: ['-dev'], dataDir });
});

after(async () => {
  await agent?.kill().catch(() => {});
  await teardown(agent, dataDir);
  await rm(jobsDir, { recursive: true, force: true });
});

test('create, mount by name, keep data across runs, refuse delete while claimed, delete after', async () => {
  const specFile = join(jobsDir, 'volume.hcl');
  await writeFile(specFile, SPEC);
  const created = await runCli(agent.address, ['volume', 'create', specFile]);
  assert.equal(created.code, 0, created.stderr);
  const id = /with ID ([0-9a-f-]{36})/.exec(created.stdout)?.[1];
  assert.ok(id, created.stdout);
  assert.match(created.stdout, /ready/);

  // The volume: ready, on the node, a 0777 directory named by its ID under <data_dir>/host_volumes.
  const vol = (await api<HostVolume>(agent.address, 'GET', `/v1/volume/host/${id}`)).body;
  assert.equal(vol.State, 'ready');
  assert.equal(vol.Name, 'counter-data');
  assert.equal(vol.PluginID, 'mkdir');
  assert.equal(vol.RequestedCapacityMinBytes, 10 * 1024 * 1024);
  assert.equal(vol.HostPath, join(dataDir, 'host_volumes', id));
  assert.equal((await stat(vol.HostPath)).mode & 0o7777, 0o777);
  const node = (await api<Node>(agent.address, 'GET', `/v1/node/${vol.NodeID}`)).body;
  assert.deepEqual(node.HostVolumes?.['counter-data'], { Name: 'counter-data', Path: vol.HostPath, ReadOnly: false, ID: id, Namespace: 'default' });
  const list = (await api<HostVolumeStub[]>(agent.address, 'GET', '/v1/volumes?type=host')).body;
  assert.deepEqual(list.map((v) => [v.ID, v.State]), [[id, 'ready']]);
  const status = await runCli(agent.address, ['volume', 'status', '-type', 'host']);
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, new RegExp(`^${id.slice(0, 8)}\\s+counter-data\\s+default\\s+mkdir\\s+\\S+\\s+default\\s+ready$`, 'm'));

  // A job mounts it by name and writes.
  const token = `gen-${process.pid}-${Date.now()}`;
  await runJob(agent.address, jobsDir, 'stateful', job(`echo ${token} > /data/value && echo wrote && exec sleep 600`));
  const [first] = await waitRunning(agent.address, 'stateful', 1, 60_000);
  assert.equal(first!.NodeID, vol.NodeID);
  await waitFor('the task to write its state', async () => ((await stdout(first!.ID)).includes('wrote') ? true : undefined), 30_000);
  assert.equal((await readFile(join(vol.HostPath, 'value'), 'utf8')).trim(), token);

  // Claimed: the delete is refused and the directory stays.
  const detail = await runCli(agent.address, ['volume', 'status', '-type', 'host', id.slice(0, 8)]);
  assert.match(detail.stdout, new RegExp(`^${first!.ID.slice(0, 8)}\\s`, 'm'), detail.stdout);
  const refused = await api(agent.address, 'DELETE', `/v1/volume/host/${id}`);
  assert.equal(refused.status, 400, refused.text);
  assert.match(refused.text, new RegExp(`volume ${id} in use by allocations: ${first!.ID}`));
  await stat(join(vol.HostPath, 'value'));

  // Stopped and run again: the new allocation reads what the first wrote.
  assert.equal((await api(agent.address, 'DELETE', '/v1/job/stateful')).status, 200);
  await waitFor('the allocation to stop', async () => ((await getAlloc(agent.address, first!.ID)).ClientStatus === 'complete' ? true : undefined), 60_000);
  await runJob(agent.address, jobsDir, 'stateful', job('cat /data/value && exec sleep 600'));
  const second = await waitFor('a new running allocation', async () => (await jobAllocs(agent.address, 'stateful')).find((a) => a.ID !== first!.ID && a.ClientStatus === 'running'), 60_000);
  assert.equal(second.NodeID, vol.NodeID);
  await waitFor('the new allocation to read the data back', async () => ((await stdout(second.ID)).trim() === token ? true : undefined), 30_000);

  // No claim left: the delete removes the directory, the volume and the node's fingerprint of it.
  assert.equal((await api(agent.address, 'DELETE', '/v1/job/stateful')).status, 200);
  await waitFor('the allocation to stop', async () => ((await getAlloc(agent.address, second.ID)).ClientStatus === 'complete' ? true : undefined), 60_000);
  const deleted = await runCli(agent.address, ['volume', 'delete', '-type', 'host', id.slice(0, 8)]);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, new RegExp(`Successfully deleted volume "${id}"!`));
  await assert.rejects(stat(vol.HostPath), /ENOENT/);
  assert.equal((await api(agent.address, 'GET', `/v1/volume/host/${id}`)).status, 404);
  const after = (await api<Node>(agent.address, 'GET', `/v1/node/${vol.NodeID}`)).body;
  assert.equal(after.HostVolumes?.['counter-data'], undefined);
  assert.deepEqual((await api<HostVolumeStub[]>(agent.address, 'GET', '/v1/volumes?type=host')).body, []);
});
