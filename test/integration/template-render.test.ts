import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import type { AllocListStub, Allocation } from '../../src/structs/index.js';
import { api, startAgent } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

const JOB = `
job "tmpl" {
  type        = "batch"
  datacenters = ["dc1"]
  group "g" {
    task "show" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/config.txt; echo \\"greeting=$GREETING\\""]
      }
      template {
        data        = "alloc={{ env \\"NOMAD_ALLOC_ID\\" }}\\n"
        destination = "local/config.txt"
      }
      template {
        data        = "GREETING=hello-{{ env \\"NOMAD_TASK_NAME\\" }}\\n"
        destination = "secrets/file.env"
        env         = true
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

const BAD_JOB = JOB.replace('job "tmpl"', 'job "tmpl-bad"').replace('{{ env \\"NOMAD_ALLOC_ID\\" }}', '{{ key \\"config/x\\" }}');

async function register(address: string, hcl: string): Promise<void> {
  const parsed = await api(address, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
  assert.equal(parsed.status, 200, parsed.text);
  const reg = await api(address, 'PUT', '/v1/jobs', { Job: parsed.body });
  assert.equal(reg.status, 200, reg.text);
}

async function terminalAlloc(address: string, jobId: string): Promise<AllocListStub> {
  return waitUntil(
    `a terminal alloc of ${jobId}`,
    async () => {
      const l = await api<AllocListStub[]>(address, 'GET', `/v1/job/${jobId}/allocations`);
      return Array.isArray(l.body) ? l.body.find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed') : undefined;
    },
    30_000,
  );
}

test('templates render into the task dir and env before a raw_exec task starts', async () => {
  const dataDir = await mkdtemp('/tmp/ctr-');
  const agent = await startAgent({ roleArgs: ['-dev'], dataDir });
  try {
    await register(agent.address, JOB);
    const stub = await terminalAlloc(agent.address, 'tmpl');
    assert.equal(stub.ClientStatus, 'complete');
    const logs = await api(agent.address, 'GET', `/v1/client/fs/cat/${stub.ID}?path=${encodeURIComponent('alloc/logs/show.stdout.0')}`);
    assert.equal(logs.status, 200, logs.text);
    assert.match(logs.text, new RegExp(`alloc=${stub.ID}`));
    assert.match(logs.text, /greeting=hello-show/);

    // A template using a Consul function fails the task setup with a clear event.
    await register(agent.address, BAD_JOB);
    const bad = await terminalAlloc(agent.address, 'tmpl-bad');
    assert.equal(bad.ClientStatus, 'failed');
    const alloc = await api<Allocation>(agent.address, 'GET', `/v1/allocation/${bad.ID}`);
    const events = alloc.body.TaskStates?.show?.Events ?? [];
    const failure = events.find((e) => e.Type === 'Setup Failure');
    assert.ok(failure, JSON.stringify(events.map((e) => e.Type)));
    assert.equal(failure.DisplayMessage, 'Template failed: unsupported function "key"');
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
