/**
 * Host volumes with the docker driver end to end: a real agent whose client offers two host
 * volumes, a private dockerd (as docker-driver.test.ts), a busybox task writing through a
 * read-write bind mount and refused on a read-only one.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { BUSYBOX_IMAGE, importBusybox, startPrivateDockerd, type PrivateDockerd } from '../drivers/private-dockerd.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { getAlloc, jobAllocs, teardown, waitFor } from './helpers/client-agent.js';

let dockerd: PrivateDockerd;
let agent: AgentProcess;
let dir: string;
let dataDir: string;

before(async () => {
  dockerd = await startPrivateDockerd();
  await importBusybox(dockerd);
  dir = mkdtempSync(join(tmpdir(), 'caravan-docker-hv-'));
  dataDir = mkdtempSync('/tmp/cv-');
  mkdirSync(join(dir, 'rw'));
  chmodSync(join(dir, 'rw'), 0o777);
  mkdirSync(join(dir, 'ro'));
  writeFileSync(join(dir, 'ro', 'seed'), 'seeded\n');
  const conf = join(dir, 'agent.hcl');
  writeFileSync(
    conf,
    `plugin "docker" {\n  config {\n    endpoint = "${dockerd.endpoint}"\n    gc {\n      image = false\n    }\n  }\n}\n` +
      `client {\n  host_volume "rw" {\n    path = "${join(dir, 'rw')}"\n  }\n  host_volume "ro" {\n    path      = "${join(dir, 'ro')}"\n    read_only = true\n  }\n}\n`,
  );
  agent = await startAgent({ roleArgs: ['-dev'], extraArgs: ['-config', conf], dataDir });
});

after(async () => {
  await agent?.kill().catch(() => {});
  await teardown(agent, dataDir);
  await dockerd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('docker: a host volume is a bind mount at its destination; a read-only one refuses writes', async () => {
  const script = 'echo from-container > /data/out && cat /seed/seed && (echo x > /seed/new 2>/dev/null && echo WROTE || echo ro-refused)';
  const job = {
    Job: {
      ID: 'dhv',
      Type: 'batch',
      Datacenters: ['dc1'],
      TaskGroups: [
        {
          Name: 'g',
          RestartPolicy: { Attempts: 0, Mode: 'fail' },
          Volumes: { data: { Type: 'host', Source: 'rw' }, seed: { Type: 'host', Source: 'ro', ReadOnly: true } },
          Tasks: [
            {
              Name: 't',
              Driver: 'docker',
              Config: { image: BUSYBOX_IMAGE, command: 'sh', args: ['-c', script], network_mode: 'none' },
              VolumeMounts: [
                { Volume: 'data', Destination: '/data' },
                { Volume: 'seed', Destination: '/seed', ReadOnly: false },
              ],
              Resources: { CPU: 50, MemoryMB: 32 },
            },
          ],
        },
      ],
    },
  };
  const reg = await api(agent.address, 'PUT', '/v1/jobs', job);
  assert.equal(reg.status, 200, reg.text);
  const stub = await waitFor('the task to finish', async () => (await jobAllocs(agent.address, 'dhv')).find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'), 90_000);
  const alloc: Allocation = await getAlloc(agent.address, stub.ID);
  assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(alloc.TaskStates?.['t']?.Events));
  const out = (await api(agent.address, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text;
  assert.match(out, /^seeded$/m);
  assert.match(out, /^ro-refused$/m);
  assert.equal(readFileSync(join(dir, 'rw', 'out'), 'utf8').trim(), 'from-container');
  assert.equal(existsSync(join(dir, 'ro', 'new')), false);
});
