/**
 * Nomad variables in templates through a real agent: a task waits for a variable its template
 * reads (a "Missing: nomad.var.block(…)" event), renders it once written, re-renders and
 * restarts (change_mode restart) when `caravan var put` changes it, lists with nomadVarList only
 * what its identity may see, and a read outside its implicit paths fails the task.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import type { AllocListStub, Allocation } from '../../src/structs/index.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

const JOB = `
job "tv" {
  datacenters = ["dc1"]
  group "g" {
    task "show" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "sleep 3600"]
      }
      template {
        data        = "{{ with nomadVar \\"nomad/jobs/tv\\" }}pw={{ .pass }}{{ end }}\\n"
        destination = "local/out.txt"
      }
      template {
        data        = "{{ range nomadVarList \\"nomad/jobs\\" }}{{ .Path }};{{ end }}\\n"
        destination = "local/list.txt"
        change_mode = "noop"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

const DENIED_JOB = `
job "tv-denied" {
  type        = "batch"
  datacenters = ["dc1"]
  group "g" {
    task "show" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      template {
        data        = "{{ with nomadVar \\"nomad/jobs/tv\\" }}{{ .pass }}{{ end }}\\n"
        destination = "local/out.txt"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

const SIGNAL_JOB = `
job "tvs" {
  datacenters = ["dc1"]
  group "g" {
    task "show" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'cp local/sig.txt local/seen.txt' HUP; while true; do sleep 0.1; done"]
      }
      template {
        data          = "{{ with nomadVar \\"nomad/jobs/tvs\\" }}{{ .v }}{{ end }}"
        destination   = "local/sig.txt"
        change_mode   = "signal"
        change_signal = "SIGHUP"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

async function register(address: string, hcl: string): Promise<void> {
  const parsed = await api(address, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
  assert.equal(parsed.status, 200, parsed.text);
  const reg = await api(address, 'PUT', '/v1/jobs', { Job: parsed.body });
  assert.equal(reg.status, 200, reg.text);
}

test('templates read Nomad variables, wait for them, re-render and restart on change, and are refused outside their paths', async () => {
  const dataDir = await mkdtemp('/tmp/ctv-');
  const agent = await startAgent({ roleArgs: ['-dev'], dataDir });
  const a = agent.address;
  try {
    await register(a, JOB);
    const stub = await waitUntil('an alloc of tv', async () => (await api<AllocListStub[]>(a, 'GET', '/v1/job/tv/allocations')).body[0], 30_000);
    const alloc = async (): Promise<Allocation> => (await api<Allocation>(a, 'GET', `/v1/allocation/${stub.ID}`)).body;
    // The variable does not exist yet: the template blocks and says so; the task does not start.
    const missing = await waitUntil(
      'the Missing template event',
      async () => (await alloc()).TaskStates?.['show']?.Events.find((e) => e.Type === 'Template'),
      30_000,
    );
    assert.equal(missing.DisplayMessage, 'Missing: nomad.var.block(nomad/jobs/tv@default.global)');
    assert.equal((await alloc()).TaskStates?.['show']?.State, 'pending');

    const cat = async (file: string): Promise<string> => (await api(a, 'GET', `/v1/client/fs/cat/${stub.ID}?path=${encodeURIComponent(`show/local/${file}`)}`)).text;
    const put = await runCli(a, ['var', 'put', 'nomad/jobs/tv', 'pass=one']);
    assert.equal(put.code, 0, put.stderr);
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/other', { Items: { x: 'y' } })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/tv/g', { Items: { x: 'y' } })).status, 200);
    await waitUntil('the task running', async () => (await alloc()).TaskStates?.['show']?.State === 'running', 30_000);
    assert.equal(await cat('out.txt'), 'pw=one\n');

    // A change re-renders the file and restarts the task (change_mode restart, the default).
    const put2 = await runCli(a, ['var', 'put', 'nomad/jobs/tv', 'pass=two']);
    assert.equal(put2.code, 0, put2.stderr);
    await waitUntil('the re-rendered file', async () => (await cat('out.txt')) === 'pw=two\n', 30_000);
    const restarted = await waitUntil(
      'the restart event',
      async () => (await alloc()).TaskStates?.['show']?.Events.find((e) => e.Type === 'Restart Signaled'),
      30_000,
    );
    assert.equal(restarted.DisplayMessage, 'Template with change_mode restart re-rendered');
    // nomadVarList lists only what the task may see: its own job's paths, not another job's.
    await waitUntil('the list', async () => (await cat('list.txt')) === 'nomad/jobs/tv;nomad/jobs/tv/g;\n', 30_000);

    // Another job reading this job's variable is refused: the task fails with Nomad's text.
    await register(a, DENIED_JOB);
    const bad = await waitUntil(
      'a failed alloc of tv-denied',
      async () => (await api<AllocListStub[]>(a, 'GET', '/v1/job/tv-denied/allocations')).body.find((x) => x.ClientStatus === 'failed'),
      60_000,
    );
    const badAlloc = (await api<Allocation>(a, 'GET', `/v1/allocation/${bad.ID}`)).body;
    const failure = badAlloc.TaskStates?.['show']?.Events.find((e) => e.Type === 'Setup Failure');
    assert.ok(failure);
    assert.equal(failure.DisplayMessage, 'Template failed: nomad.var.get(nomad/jobs/tv@default.global): Permission denied');
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('a template with change_mode signal re-renders and signals the task instead of restarting it', async () => {
  const dataDir = await mkdtemp('/tmp/ctvs-');
  const agent = await startAgent({ roleArgs: ['-dev'], dataDir });
  const a = agent.address;
  try {
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/tvs', { Items: { v: 'one' } })).status, 200);
    await register(a, SIGNAL_JOB);
    const stub = await waitUntil('an alloc of tvs', async () => (await api<AllocListStub[]>(a, 'GET', '/v1/job/tvs/allocations')).body[0], 30_000);
    const alloc = async (): Promise<Allocation> => (await api<Allocation>(a, 'GET', `/v1/allocation/${stub.ID}`)).body;
    await waitUntil('the task running', async () => (await alloc()).TaskStates?.['show']?.State === 'running', 30_000);
    const cat = async (file: string) => {
      const r = await api(a, 'GET', `/v1/client/fs/cat/${stub.ID}?path=${encodeURIComponent(`show/local/${file}`)}`);
      return r.status === 200 ? r.text : undefined;
    };
    assert.equal(await cat('sig.txt'), 'one');
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/tvs', { Items: { v: 'two' } })).status, 200);
    // The trap copies the re-rendered file when SIGHUP arrives.
    await waitUntil('the task saw the signal', async () => (await cat('seen.txt')) === 'two', 30_000);
    const events = (await alloc()).TaskStates?.['show']?.Events ?? [];
    const sig = events.find((e) => e.Type === 'Signaling');
    assert.equal(sig?.DisplayMessage, 'Task being sent signal SIGHUP: Template re-rendered');
    assert.ok(!events.some((e) => e.Type === 'Restart Signaled'), 'signalled, not restarted');
    assert.equal((await alloc()).TaskStates?.['show']?.Restarts, 0);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
