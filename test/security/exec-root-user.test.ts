/**
 * An exec task asking for `user = "root"` — the way to host-global /proc/sys that issue 26
 * item 3 found — with real agents: refused by default (Nomad's client options user.denylist =
 * "root,Administrator" over user.checked_drivers = "exec,qemu,java"), also under its numeric
 * name; allowed once the operator empties the denylist, and then still unable to write the host's
 * kernel knobs. A task without a user runs as nobody, as before.
 *
 * Needs what the exec driver needs (root, bwrap, writable cgroups). The kernel knob is only
 * opened for writing, never written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { getAlloc, jobAllocs, runJob, teardown, waitFor } from '../integration/helpers/client-agent.js';

function job(name: string, user: string | undefined, script: string): string {
  return `
job "${name}" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "exec"
      ${user === undefined ? '' : `user = ${JSON.stringify(user)}`}
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
}

const PROBE = 'echo "uid=$(id -u) user=$(id -un)"; if err=$( (exec 3>>/proc/sys/kernel/core_pattern) 2>&1 ); then echo core_pattern=OPENED; else echo "core_pattern=$err"; fi';

/** Runs `fn` against a dev agent whose config file holds `config`; tears it all down after. */
async function withAgent(config: string, fn: (agent: AgentProcess, jobsDir: string) => Promise<void>): Promise<void> {
  const dataDir = await mkdtemp('/tmp/cv-');
  const jobsDir = await mkdtemp('/tmp/cv-jobs-');
  const configFile = join(jobsDir, 'agent.hcl');
  await writeFile(configFile, config);
  let agent: AgentProcess | undefined;
  try {
    agent = await startAgent({ roleArgs: ['-dev', '-config', configFile], dataDir });
    await fn(agent, jobsDir);
  } finally {
    await teardown(agent, dataDir);
    await rm(jobsDir, { recursive: true, force: true });
  }
}

async function finished(agent: AgentProcess, jobId: string): Promise<Allocation> {
  const stub = await waitFor(`a terminal alloc of ${jobId}`, async () => (await jobAllocs(agent.address, jobId)).find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'), 60_000);
  return getAlloc(agent.address, stub.ID);
}

function messages(alloc: Allocation): string {
  return (alloc.TaskStates?.['t']?.Events ?? []).map((e) => `${e.Type}: ${e.Message ?? ''} ${e.DisplayMessage ?? ''} ${e.SetupError ?? ''}`).join('\n');
}

async function stdout(agent: AgentProcess, allocId: string): Promise<string> {
  return (await api(agent.address, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout&plain=true`)).text;
}

test('exec user policy: root (by name or uid 0) is refused by default; no user runs as nobody', async () => {
  await withAgent('# defaults only\n', async (agent, jobsDir) => {
    await runJob(agent.address, jobsDir, 'as-root', job('as-root', 'root', PROBE));
    await runJob(agent.address, jobsDir, 'as-uid0', job('as-uid0', '0', PROBE));
    await runJob(agent.address, jobsDir, 'as-default', job('as-default', undefined, PROBE));

    const root = await finished(agent, 'as-root');
    assert.equal(root.ClientStatus, 'failed');
    assert.match(messages(root), /running as user "root" is disallowed/);
    assert.equal(root.TaskStates?.['t']?.Events.some((e) => e.Type === 'Started'), false, 'the task never started');

    const uid0 = await finished(agent, 'as-uid0');
    assert.equal(uid0.ClientStatus, 'failed');
    assert.match(messages(uid0), /running as user "0" is disallowed/);

    const dflt = await finished(agent, 'as-default');
    assert.equal(dflt.ClientStatus, 'complete', messages(dflt));
    assert.match(await stdout(agent, dflt.ID), /^uid=65534 user=nobody$/m);
  });
});

test('exec user policy: with user.denylist emptied root runs, and still cannot write /proc/sys', async () => {
  const before = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
  await withAgent('client {\n  options = {\n    "user.denylist" = ""\n  }\n}\n', async (agent, jobsDir) => {
    await runJob(agent.address, jobsDir, 'as-root', job('as-root', 'root', PROBE));
    const root = await finished(agent, 'as-root');
    assert.equal(root.ClientStatus, 'complete', messages(root));
    const out = await stdout(agent, root.ID);
    assert.match(out, /^uid=0 user=root$/m);
    assert.match(out, /^core_pattern=.*Read-only file system/m);
  });
  assert.equal(readFileSync('/proc/sys/kernel/core_pattern', 'utf8'), before);
});
