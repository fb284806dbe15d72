/**
 * Nomad variables in templates through a real agent: a task waits for a variable its template
 * reads (a "Missing: nomad.var.block(…)" event), renders it once written, re-renders and
 * restarts (change_mode restart) when `caravan var put` changes it, lists with nomadVarList only
 * what its identity may see, and a read outside its implicit paths fails the task; change_mode
 * signal signals instead, and change_mode script runs its change_script inside the task (and
 * kills the task when it fails with fail_on_error).
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

/** A template whose change runs a script in the task; `fail` makes the script fail with fail_on_error. */
const scriptJob = (id: string, script: string, fail: boolean): string => `
job "${id}" {
  datacenters = ["dc1"]
  group "g" {
    task "show" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "sleep 3600"]
      }
      template {
        data        = "{{ with nomadVar \\"nomad/jobs/${id}\\" }}{{ .v }}{{ end }}"
        destination = "local/s.txt"
        change_mode = "script"
        splay       = "200ms"
        change_script {
          command       = "/bin/sh"
          args          = ["-c", "${script}"]
          timeout       = "5s"
          fail_on_error = ${fail}
        }
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
    const put2 = await runCli(a, ['var', 'put', '-force', 'nomad/jobs/tv', 'pass=two']);
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
    // The task's events reach the server with the client's next (batched) alloc update.
    const sig = await waitUntil('the Signaling event', async () => (await alloc()).TaskStates?.['show']?.Events.find((e) => e.Type === 'Signaling'), 30_000);
    assert.equal(sig.DisplayMessage, 'Task being sent signal SIGHUP: Template re-rendered');
    const events = (await alloc()).TaskStates?.['show']?.Events ?? [];
    assert.ok(!events.some((e) => e.Type === 'Restart Signaled'), 'signalled, not restarted');
    assert.equal((await alloc()).TaskStates?.['show']?.Restarts, 0);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('a template with change_mode script runs its change_script in the task, and fail_on_error kills the task', async () => {
  const dataDir = await mkdtemp('/tmp/ctvx-');
  const agent = await startAgent({ roleArgs: ['-dev'], dataDir });
  const a = agent.address;
  try {
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/tvx', { Items: { v: 'one' } })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/tvf', { Items: { v: 'one' } })).status, 200);
    await register(a, scriptJob('tvx', 'cp local/s.txt local/copied.txt; echo $NOMAD_TASK_NAME >> local/copied.txt', false));
    await register(a, scriptJob('tvf', 'exit 3', true));
    const allocOf = async (job: string): Promise<Allocation> => {
      const stub = await waitUntil(`an alloc of ${job}`, async () => (await api<AllocListStub[]>(a, 'GET', `/v1/job/${job}/allocations`)).body[0], 30_000);
      return (await api<Allocation>(a, 'GET', `/v1/allocation/${stub.ID}`)).body;
    };
    const x = await allocOf('tvx');
    const f = await allocOf('tvf');
    const state = async (id: string) => (await api<Allocation>(a, 'GET', `/v1/allocation/${id}`)).body;
    for (const id of [x.ID, f.ID]) await waitUntil('the task running', async () => (await state(id)).TaskStates?.['show']?.State === 'running', 30_000);
    const cat = async (id: string, file: string) => {
      const r = await api(a, 'GET', `/v1/client/fs/cat/${id}?path=${encodeURIComponent(`show/local/${file}`)}`);
      return r.status === 200 ? r.text : undefined;
    };

    // The script ran in the task's directory with the task's environment, after the new render.
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/tvx', { Items: { v: 'two' } })).status, 200);
    await waitUntil('the script\'s copy', async () => (await cat(x.ID, 'copied.txt')) === 'twoshow\n', 30_000);
    const ran = await waitUntil('the hook message', async () => (await state(x.ID)).TaskStates?.['show']?.Events.find((e) => e.Type === 'Task hook message'), 30_000);
    assert.match(ran.DisplayMessage, /^Template successfully ran script \/bin\/sh with arguments: \[-c cp local\/s.txt .*\]\. Exit code: 0$/);
    const xs = (await state(x.ID)).TaskStates?.['show'];
    assert.equal(xs?.State, 'running');
    assert.equal(xs?.Restarts, 0);

    // A failing script with fail_on_error: a hook failure, then the task is killed and failed.
    assert.equal((await api(a, 'PUT', '/v1/var/nomad/jobs/tvf', { Items: { v: 'two' } })).status, 200);
    const failed = await waitUntil('the failed alloc', async () => {
      const al = await state(f.ID);
      return al.ClientStatus === 'failed' ? al : undefined;
    }, 30_000);
    const events = failed.TaskStates?.['show']?.Events ?? [];
    assert.equal(events.find((e) => e.Type === 'Task hook failed')?.DisplayMessage, 'Template ran script /bin/sh with arguments [-c exit 3] on change but it exited with code: 3');
    assert.ok(events.some((e) => e.Type === 'Killing' && e.DisplayMessage === 'Template script failed, task is being killed'), JSON.stringify(events.map((e) => e.DisplayMessage)));
    assert.equal(failed.TaskStates?.['show']?.Failed, true);
    assert.equal(failed.TaskStates?.['show']?.State, 'dead');
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
