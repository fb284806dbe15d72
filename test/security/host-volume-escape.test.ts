/**
 * Attempts to reach host paths through host volumes, against a real dev agent and real exec
 * tasks: a volume_mount destination with `..` or under a host directory the sandbox binds, a
 * symlink inside the host volume pointing out of it, a symlink planted where a mount point goes,
 * a job naming a volume the node does not offer, and a read_only volume mounted read-write by the
 * task's own request. Every host file touched is one this test created.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Allocation, Evaluation } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { getAlloc, jobAllocs, runJob, teardown, waitFor } from '../integration/helpers/client-agent.js';
import { prepareMountPoints } from '../../src/drivers/exec/mount-points.js';

let agent: AgentProcess;
let dataDir: string;
let jobsDir: string;
let volDir: string;
let hostSecret: string;

function job(name: string, opts: { script: string; volume?: string; destination?: string; groupReadOnly?: boolean; mountReadOnly?: boolean }): string {
  return `
job "${name}" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    volume "data" {
      type      = "host"
      source    = "${opts.volume ?? 'shared'}"
      read_only = ${opts.groupReadOnly ?? false}
    }
    task "t" {
      driver = "exec"
      volume_mount {
        volume      = "data"
        destination = ${JSON.stringify(opts.destination ?? '/data')}
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

async function finished(jobId: string): Promise<Allocation> {
  const stub = await waitFor(`a terminal alloc of ${jobId}`, async () => (await jobAllocs(agent.address, jobId)).find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'), 60_000);
  return getAlloc(agent.address, stub.ID);
}

async function stdout(allocId: string): Promise<string> {
  return (await api(agent.address, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout&plain=true`)).text;
}

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  jobsDir = await mkdtemp('/tmp/cv-hvx-');
  volDir = join(jobsDir, 'vol');
  await mkdir(volDir);
  await chmod(volDir, 0o777);
  hostSecret = join(jobsDir, 'host-secret.txt');
  await writeFile(hostSecret, 'HOST-SECRET\n', { mode: 0o644 });
  // Planted by "someone" with access to the volume: a link out of it, to a host file.
  await symlink(hostSecret, join(volDir, 'escape'));
  const config = join(jobsDir, 'agent.hcl');
  await writeFile(config, `client {\n  host_volume "shared" {\n    path = "${volDir}"\n  }\n}\n`);
  agent = await startAgent({ roleArgs: ['-dev', '-config', config], dataDir });
});

after(async () => {
  await agent?.kill().catch(() => {});
  await teardown(agent, dataDir);
  await rm(jobsDir, { recursive: true, force: true });
});

test('a volume_mount destination with ".." is refused at registration, naming the field', async () => {
  const body = {
    Job: {
      ID: 'dotdot',
      Datacenters: ['dc1'],
      Type: 'batch',
      TaskGroups: [
        {
          Name: 'g',
          Volumes: { data: { Type: 'host', Source: 'shared' } },
          Tasks: [{ Name: 't', Driver: 'exec', Config: { command: '/bin/true' }, VolumeMounts: [{ Volume: 'data', Destination: '../../../../tmp/planted' }] }],
        },
      ],
    },
  };
  const r = await api(agent.address, 'PUT', '/v1/jobs', body);
  assert.equal(r.status, 400, r.text);
  assert.match(r.text, /volume_mount\[0\]/);
  assert.match(r.text, /must not contain "\.\."/);
  assert.equal((await api(agent.address, 'GET', '/v1/job/dotdot')).status, 404, 'nothing was registered');
});

test('an absolute destination under a host directory the sandbox binds (/etc) fails the task; the host is untouched', async () => {
  const probe = `/etc/caravan-hv-probe-${process.pid}`;
  await runJob(agent.address, jobsDir, 'etc', job('etc', { destination: probe, script: `echo x > ${probe}/written; echo ran` }));
  const alloc = await finished('etc');
  assert.equal(alloc.ClientStatus, 'failed');
  const events = JSON.stringify(alloc.TaskStates?.['t']?.Events);
  assert.match(events, /under \/etc/);
  assert.equal(existsSync(probe), false, 'no mount point was made in the host /etc');
  assert.equal(existsSync(join(volDir, 'written')), false);
});

test('a symlink inside the host volume pointing out of it resolves inside the sandbox, not on the host', async () => {
  const script = 'cat /data/escape 2>/dev/null || echo no-escape; ln -s / /data/root-link 2>/dev/null; ls /data/root-link/ >/dev/null && echo listed-sandbox-root';
  await runJob(agent.address, jobsDir, 'links', job('links', { script }));
  const alloc = await finished('links');
  assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(alloc.TaskStates?.['t']?.Events));
  const out = await stdout(alloc.ID);
  assert.match(out, /no-escape/);
  assert.doesNotMatch(out, /HOST-SECRET/);
  assert.equal((await readFile(hostSecret, 'utf8')).trim(), 'HOST-SECRET');
  await rm(join(volDir, 'root-link'), { force: true });
});

test('a symlink planted where a mount point goes is refused, and nothing is made where it points', () => {
  const root = mkdtempSync(join(tmpdir(), 'caravan-hvx-'));
  try {
    const taskDir = join(root, 'task');
    const allocDir = join(root, 'alloc');
    const target = join(root, 'host-target');
    for (const d of [taskDir, allocDir, target]) mkdirSync(d);
    // The task, on an earlier run, turned the mount point's parent into a link to a host directory.
    symlinkSync(target, join(taskDir, 'srv'));
    const mount = { hostPath: volDir, taskPath: '/srv/data', readOnly: false, propagationMode: 'private' };
    assert.throws(() => prepareMountPoints(taskDir, allocDir, {}, [mount]), /"\/srv" is a symlink/);
    assert.equal(existsSync(join(target, 'data')), false);
    // A sibling task doing the same in the shared /alloc.
    symlinkSync(target, join(allocDir, 'data'));
    assert.throws(() => prepareMountPoints(taskDir, allocDir, {}, [{ ...mount, taskPath: '/alloc/data' }]), /"\/alloc\/data" is a symlink/);
    assert.ok(lstatSync(join(allocDir, 'data')).isSymbolicLink());
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a job naming a volume the node does not offer is never placed nor run', async () => {
  await runJob(agent.address, jobsDir, 'other', job('other', { volume: 'etc-on-host', script: 'echo ran' }));
  const ev = await waitFor('the evaluation to fail placement', async () => (await api<Evaluation[]>(agent.address, 'GET', '/v1/job/other/evaluations')).body.find((e) => e.FailedTGAllocs?.['g']));
  assert.deepEqual(ev.FailedTGAllocs!['g']!.ConstraintFiltered, { 'missing compatible host volumes': 1 });
  assert.deepEqual(await jobAllocs(agent.address, 'other'), []);
});

test('a read_only volume mounted read-write by the task\'s own request is still read-only', async () => {
  const script = 'echo x > /data/rw-attempt 2>/dev/null && echo WROTE || echo write-refused';
  await runJob(agent.address, jobsDir, 'rw', job('rw', { groupReadOnly: true, mountReadOnly: false, script }));
  const alloc = await finished('rw');
  assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(alloc.TaskStates?.['t']?.Events));
  assert.match(await stdout(alloc.ID), /^write-refused$/m);
  assert.equal(existsSync(join(volDir, 'rw-attempt')), false);
});
