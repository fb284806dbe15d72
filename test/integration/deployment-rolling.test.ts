/**
 * A rolling update through a real dev agent: a count-3 raw_exec service with
 * update { max_parallel = 1, min_healthy_time = "1s" } gets a new env var; at every sample no
 * more old allocations are stopped than new ones are healthy plus one, the deployment ends
 * successful and the new job version is stable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Deployment, Job } from '../../src/structs/index.js';
import { api, runCli } from './helpers/agent-process.js';
import { startDevAgent, teardown, waitFor } from './helpers/client-agent.js';

function jobHcl(version: string): string {
  return `
job "roll" {
  datacenters = ["dc1"]
  type = "service"
  group "g" {
    count = 3
    update {
      max_parallel     = 1
      min_healthy_time = "1s"
      healthy_deadline = "30s"
    }
    task "t" {
      driver = "raw_exec"
      env {
        ROLL_VERSION = "${version}"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 1; done"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;
}

test('rolling update: one old allocation at a time, deployment successful, version stable', async () => {
  const agent = await startDevAgent();
  const dataDir = agent.dataDir;
  try {
    const v0 = join(dataDir, 'v0.hcl');
    await writeFile(v0, jobHcl('zero'));
    const first = await runCli(agent.address, ['job', 'run', v0], { timeoutMs: 60_000 });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    assert.match(first.stdout, /==> .*Monitoring deployment "[0-9a-f]{8}"/);
    assert.match(first.stdout, /Deployment "[0-9a-f]{8}" successful/);
    const job0 = await api<Job>(agent.address, 'GET', '/v1/job/roll');
    assert.equal(job0.body.Version, 0);
    assert.equal(job0.body.Stable, true, 'the first version is stable after its deployment');

    // Update and sample the allocations until the rollout ends.
    const v1 = join(dataDir, 'v1.hcl');
    await writeFile(v1, jobHcl('one'));
    let finished = false;
    const run = runCli(agent.address, ['job', 'run', v1], { timeoutMs: 90_000 }).finally(() => (finished = true));
    let samples = 0;
    let maxNewHealthy = 0;
    while (!finished) {
      const res = await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/roll/allocations');
      const old = res.body.filter((a) => a.JobVersion === 0);
      const stoppedOld = old.filter((a) => a.DesiredStatus !== 'run').length;
      const healthyNew = res.body.filter((a) => a.JobVersion === 1 && a.DeploymentStatus?.Healthy === true).length;
      maxNewHealthy = Math.max(maxNewHealthy, healthyNew);
      assert.ok(stoppedOld <= healthyNew + 1, `sample ${samples}: ${stoppedOld} old stopped with ${healthyNew} new healthy`);
      samples++;
      await new Promise((r) => setTimeout(r, 100));
    }
    const second = await run;
    assert.equal(second.code, 0, `${second.stdout}\n${second.stderr}`);
    assert.match(second.stdout, /Deployment "[0-9a-f]{8}" successful/);
    assert.ok(samples > 5, 'the rollout took several steps');
    assert.equal(maxNewHealthy >= 2, true);

    const d = await api<Deployment>(agent.address, 'GET', '/v1/job/roll/deployment');
    assert.equal(d.body.Status, 'successful');
    assert.equal(d.body.JobVersion, 1);
    assert.equal(d.body.TaskGroups.g?.HealthyAllocs, 3);
    assert.equal(d.body.TaskGroups.g?.PlacedAllocs, 3);
    const job1 = await api<Job>(agent.address, 'GET', '/v1/job/roll');
    assert.equal(job1.body.Version, 1);
    assert.equal(job1.body.Stable, true);
    const live = await waitFor('three running allocations of version 1', async () => {
      const l = await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/roll/allocations');
      const running = l.body.filter((a) => a.DesiredStatus === 'run' && a.ClientStatus === 'running');
      return running.length === 3 && running.every((a) => a.JobVersion === 1) ? running : undefined;
    });
    assert.equal(live.length, 3);

    const list = await runCli(agent.address, ['deployment', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /roll +1 +successful +Deployment completed successfully/);
    const status = await runCli(agent.address, ['deployment', 'status', d.body.ID.slice(0, 8)]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /g +3 +3 +3 +0/);
  } finally {
    await teardown(agent, dataDir);
  }
});
