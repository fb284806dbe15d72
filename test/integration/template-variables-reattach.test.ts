/**
 * A task whose template reads a variable keeps being watched after its agent is killed and
 * restarted: the restarted client reattaches to the task (no restart) and learns what its
 * templates read, so a later change of the variable still re-renders the file and restarts the
 * task (change_mode restart), rendered with the task's environment as before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, runCli, type AgentProcess } from './helpers/agent-process.js';
import { getAlloc, runJob, startDevAgent, taskState, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

const JOB = `
job "tvr" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do sleep 0.2; done"]
      }
      template {
        data        = "v={{ with nomadVar \\"nomad/jobs/tvr\\" }}{{ .v }}{{ end }} alloc={{ env \\"NOMAD_ALLOC_ID\\" }}\\n"
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

test('template variables are watched again after the agent restarts and reattaches', async () => {
  let agent: AgentProcess = await startDevAgent();
  const dataDir = agent.dataDir;
  try {
    assert.equal((await api(agent.address, 'PUT', '/v1/var/nomad/jobs/tvr', { Items: { v: '1' } })).status, 200);
    await runJob(agent.address, dataDir, 'tvr', JOB);
    const [stub] = await waitRunning(agent.address, 'tvr', 1);
    const cat = async () => (await api(agent.address, 'GET', `/v1/client/fs/cat/${stub!.ID}?path=${encodeURIComponent('t/local/out.txt')}`)).text;
    assert.equal(await cat(), `v=1 alloc=${stub!.ID}\n`);

    await agent.kill();
    agent = await startDevAgent({ dataDir, port: agent.port });
    await waitFor('the task reattached', async () => (taskState(await getAlloc(agent.address, stub!.ID), 't').State === 'running' ? true : undefined), 30_000);
    const put = await runCli(agent.address, ['var', 'put', '-force', 'nomad/jobs/tvr', 'v=2']);
    assert.equal(put.code, 0, put.stderr);
    await waitFor('the re-rendered file', async () => ((await cat()) === `v=2 alloc=${stub!.ID}\n` ? true : undefined), 30_000);
    const restarted = await waitFor('the restart', async () => taskState(await getAlloc(agent.address, stub!.ID), 't').Events.find((e) => e.Type === 'Restart Signaled'), 30_000);
    assert.equal(restarted.DisplayMessage, 'Template with change_mode restart re-rendered');
  } finally {
    await teardown(agent, dataDir);
  }
});
