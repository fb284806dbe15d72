/**
 * Client crash recovery with a real dev agent: SIGKILL the agent while 20 tasks run, restart it
 * on the same data dir, and every task is reattached with the same PID and not restarted; a task
 * that exited while the agent was down is reported with its true exit code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentProcess } from './helpers/agent-process.js';
import { eventTypes, getAlloc, jobAllocs, pidAlive, runJob, startDevAgent, taskPids, taskState, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

const manyHcl = `
job "many" {
  datacenters = ["*"]
  group "g" {
    count = 20
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;

const endsHcl = `
job "ends" {
  datacenters = ["*"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "sleep 5; exit 7"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;

test('client: after SIGKILL of the agent, 20 tasks reattach with the same PIDs and an exit during the downtime is recorded truthfully', async () => {
  let agent: AgentProcess = await startDevAgent();
  const dataDir = agent.dataDir;
  const tmp = await mkdtemp(join(tmpdir(), 'cv-jobs-'));
  try {
    await runJob(agent.address, tmp, 'many', manyHcl);
    const many = await waitRunning(agent.address, 'many', 20, 30_000);
    const pids = new Map<string, number>();
    for (const a of many) {
      const p = await waitFor(`pid of ${a.ID}`, async () => (await taskPids(a.ID, 't'))[0]);
      pids.set(a.ID, p);
    }
    assert.equal(new Set(pids.values()).size, 20);

    await runJob(agent.address, tmp, 'ends', endsHcl);
    const [ends] = await waitRunning(agent.address, 'ends', 1);
    const endsPid = await waitFor('pid of the ending task', async () => (await taskPids(ends!.ID, 't'))[0]);

    // Crash the agent before the short task ends; its tasks live on under the supervisor.
    await agent.kill();
    for (const [id, p] of pids) assert.ok(pidAlive(p), `task of ${id} (pid ${p}) survived the agent`);
    await waitFor('the short task to exit while the agent is down', () => (pidAlive(endsPid) ? undefined : true), 15_000, 50);

    agent = await startDevAgent({ dataDir, port: agent.port });
    // Every one of the 20 is running again under the same process, with no restart.
    await waitFor('20 reattached tasks', async () => {
      const all = await Promise.all([...pids.keys()].map((id) => getAlloc(agent.address, id)));
      return all.every((a) => a.ClientStatus === 'running') ? all : undefined;
    });
    // Give the restarted client a moment to report anything it would (wrongly) do on reattach.
    await new Promise((r) => setTimeout(r, 1_000));
    for (const [id, pid] of pids) {
      const a = await getAlloc(agent.address, id);
      assert.equal(a.ClientStatus, 'running', id);
      const st = taskState(a, 't');
      assert.equal(st.State, 'running', id);
      assert.equal(st.Restarts, 0, `${id}: ${eventTypes(st).join(', ')}`);
      assert.equal(eventTypes(st).filter((t) => t === 'Started').length, 1, `${id}: ${eventTypes(st).join(', ')}`);
      assert.ok(!eventTypes(st).includes('Terminated'), `${id}: ${eventTypes(st).join(', ')}`);
      assert.deepEqual(await taskPids(id, 't'), [pid], `${id} runs under the same pid`);
    }
    assert.equal((await jobAllocs(agent.address, 'many')).length, 20, 'no replacement allocs');

    // The task that ended meanwhile: exit code 7, as it really exited.
    const ended = await waitFor('the ended task to be reported', async () => {
      const a = await getAlloc(agent.address, ends!.ID);
      return a.ClientStatus === 'failed' ? a : undefined;
    });
    const st = taskState(ended, 't');
    assert.equal(st.State, 'dead');
    const term = st.Events.filter((e) => e.Type === 'Terminated');
    assert.equal(term.length, 1, eventTypes(st).join(', '));
    assert.equal(term[0]!.ExitCode, 7);
    assert.equal(term[0]!.Signal, 0);
    assert.equal(eventTypes(st).filter((t) => t === 'Started').length, 1, eventTypes(st).join(', '));
  } finally {
    await teardown(agent, dataDir);
    await rm(tmp, { recursive: true, force: true });
  }
});
