import { test } from 'node:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { Allocation } from '../../src/structs/index.js';
import { api } from './helpers/agent-process.js';
import { startDevAgent, waitFor } from './helpers/client-agent.js';

const HCL = `
job "deadline" {
  type        = "batch"
  datacenters = ["dc1"]
  group "work" {
    max_run_duration = "3s"
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "sleep" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`;

test('a batch job with max_run_duration is stopped by its client: complete, with Nomad\'s reason', async () => {
  const agent = await startDevAgent();
  try {
    const parsed = await api<Record<string, unknown>>(agent.address, 'POST', '/v1/jobs/parse', { JobHCL: HCL, Canonicalize: true });
    assert.equal(parsed.status, 200, parsed.text);
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: parsed.body });
    assert.equal(reg.status, 200, reg.text);
    const running = await waitFor('the task to run', async () => {
      const allocs = (await api<Allocation[]>(agent.address, 'GET', '/v1/job/deadline/allocations')).body;
      return allocs.find((a) => a.ClientStatus === 'running');
    });
    const done = await waitFor('the allocation to end', async () => {
      const a = (await api<Allocation>(agent.address, 'GET', `/v1/allocation/${running.ID}`)).body;
      return a.ClientStatus === 'complete' || a.ClientStatus === 'failed' ? a : undefined;
    }, 60_000);
    assert.equal(done.ClientStatus, 'complete');
    assert.equal(done.ClientDescription, 'allocation exceeded max_run_duration');
    const events = done.TaskStates!['sleep']!.Events.map((e) => e.DisplayMessage);
    assert.ok(events.includes('allocation exceeded max_run_duration'), events.join(' | '));
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('when max_run_duration ends a batch allocation its poststop task is skipped: dead, never started, nothing run', async () => {
  const agent = await startDevAgent();
  const marker = join(agent.dataDir, 'poststop-ran');
  const hcl = HCL.replace('job "deadline"', 'job "deadline-poststop"').replace(
    '    task "sleep" {',
    `    task "cleanup" {
      lifecycle {
        hook = "poststop"
      }
      driver = "raw_exec"
      config {
        command = "/usr/bin/touch"
        args    = [${JSON.stringify(marker)}]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
    task "sleep" {`,
  );
  try {
    const parsed = await api<Record<string, unknown>>(agent.address, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
    assert.equal(parsed.status, 200, parsed.text);
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: parsed.body });
    assert.equal(reg.status, 200, reg.text);
    const running = await waitFor('the task to run', async () => {
      const allocs = (await api<Allocation[]>(agent.address, 'GET', '/v1/job/deadline-poststop/allocations')).body;
      return allocs.find((a) => a.ClientStatus === 'running');
    });
    const done = await waitFor('the allocation to end', async () => {
      const a = (await api<Allocation>(agent.address, 'GET', `/v1/allocation/${running.ID}`)).body;
      return a.ClientStatus === 'complete' || a.ClientStatus === 'failed' ? a : undefined;
    }, 60_000);
    assert.equal(done.ClientStatus, 'complete');
    assert.equal(done.ClientDescription, 'allocation exceeded max_run_duration');
    const cleanup = done.TaskStates!['cleanup']!;
    assert.equal(cleanup.State, 'dead');
    assert.ok(!cleanup.StartedAt || cleanup.StartedAt.startsWith('0001-01-01'), `poststop started at ${cleanup.StartedAt}`);
    assert.ok(!cleanup.Events.some((e) => e.Type === 'Started'), cleanup.Events.map((e) => e.Type).join(' | '));
    assert.ok(!existsSync(marker), 'the poststop task ran');
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
