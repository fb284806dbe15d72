/**
 * The client end to end with a real dev agent and real processes: a service job's tasks run as
 * real PIDs, an outside kill -9 restarts the task after the restart delay, exceeding the
 * attempts fails the alloc and the server reschedules it, a batch job completes, and job stop
 * kills everything within kill_timeout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from '../../src/structs/index.js';
import { api, runCli } from './helpers/agent-process.js';
import { eventTypes, getAlloc, jobAllocs, pidAlive, runJob, startDevAgent, taskPids, taskState, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

const serviceHcl = `
job "svc" {
  datacenters = ["*"]
  group "g" {
    count = 3
    restart {
      attempts = 1
      interval = "30m"
      delay    = "1s"
      mode     = "fail"
    }
    reschedule {
      attempts       = 1
      interval       = "1h"
      delay          = "1s"
      delay_function = "constant"
      unlimited      = false
    }
    task "t" {
      driver       = "raw_exec"
      kill_timeout = "2s"
      config {
        command = "/bin/sh"
        args    = ["-c", "trap '' INT TERM; while true; do sleep 1; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

const batchHcl = `
job "once" {
  datacenters = ["*"]
  type        = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

test('client: service tasks are real processes; kill -9 restarts, then fails and reschedules; stop kills all', async () => {
  const agent = await startDevAgent();
  const tmp = await mkdtemp(join(tmpdir(), 'cv-jobs-'));
  try {
    await runJob(agent.address, tmp, 'svc', serviceHcl);
    const running = await waitRunning(agent.address, 'svc', 3);
    const pids = new Map<string, number>();
    for (const a of running) {
      const found = await waitFor(`pid of ${a.ID}`, async () => ((await taskPids(a.ID, 't')).length > 0 ? await taskPids(a.ID, 't') : undefined));
      assert.ok(pidAlive(found[0]!), `pid ${found[0]} of ${a.ID} is alive`);
      pids.set(a.ID, found[0]!);
    }
    assert.equal(new Set(pids.values()).size, 3, 'three distinct processes');

    // kill -9 from outside: the task restarts after the restart delay.
    const victim = running[0]!.ID;
    process.kill(pids.get(victim)!, 'SIGKILL');
    const restarted = await waitFor('restart of the killed task', async () => {
      const st = taskState(await getAlloc(agent.address, victim), 't');
      return st.Restarts === 1 && st.State === 'running' ? st : undefined;
    });
    const types = eventTypes(restarted);
    const term = types.indexOf('Terminated');
    assert.ok(term > 0, `Terminated event: ${types.join(', ')}`);
    assert.equal(types[term + 1], 'Restarting', types.join(', '));
    assert.equal(types[term + 2], 'Started', types.join(', '));
    const termEv = restarted.Events[term]!;
    assert.equal(termEv.Signal, 9);
    assert.equal(termEv.ExitCode, 137);
    assert.ok(restarted.Events[term + 1]!.StartDelay >= 1e9, `restart delay honours the policy: ${restarted.Events[term + 1]!.StartDelay}`);
    const newPid = await waitFor('new pid', async () => {
      const p = await taskPids(victim, 't');
      return p.length > 0 && p[0] !== pids.get(victim) ? p[0] : undefined;
    });
    assert.ok(pidAlive(newPid));

    // A second kill exceeds attempts = 1: Not Restarting, the alloc fails, and it is rescheduled.
    process.kill(newPid, 'SIGKILL');
    const failed = await waitFor('failed alloc', async () => {
      const a = await getAlloc(agent.address, victim);
      return a.ClientStatus === 'failed' ? a : undefined;
    });
    const fst = taskState(failed, 't');
    assert.equal(fst.State, 'dead');
    assert.equal(fst.Failed, true);
    assert.equal(eventTypes(fst).at(-1), 'Not Restarting', eventTypes(fst).join(', '));
    const replacement = await waitFor('replacement alloc', async () => {
      const allocs = await jobAllocs(agent.address, 'svc');
      const r = allocs.find((a) => a.ID !== victim && !pids.has(a.ID));
      return r && r.ClientStatus === 'running' ? r : undefined;
    });
    const full = await getAlloc(agent.address, replacement.ID);
    assert.equal(full.PreviousAllocation, victim);
    assert.equal(full.Name, failed.Name, 'the replacement keeps the alloc name (index)');
    assert.equal((await getAlloc(agent.address, victim)).NextAllocation, replacement.ID);

    // job stop: every process is gone within kill_timeout (the tasks ignore SIGINT, the default kill signal, and SIGTERM, so SIGKILL is needed).
    const live = (await waitRunning(agent.address, 'svc', 3)).map((a) => a.ID);
    const livePids = (await Promise.all(live.map((id) => taskPids(id, 't')))).flat();
    assert.ok(livePids.length >= 3, `pids of running allocs: ${livePids.join(',')}`);
    const stop = await runCli(agent.address, ['job', 'stop', 'svc']);
    assert.equal(stop.code, 0, `${stop.stdout}\n${stop.stderr}`);
    // kill_timeout is 2 s; leave slack for the stop to reach the client.
    await waitFor('processes gone after stop', () => (livePids.every((p) => !pidAlive(p)) ? true : undefined), 8_000, 50);
    const stopped = await waitFor('allocs complete after stop', async () => {
      const all = await Promise.all(live.map((id) => getAlloc(agent.address, id)));
      return all.every((a) => a.ClientStatus === 'complete') ? all : undefined;
    });
    for (const a of stopped) {
      const ev = eventTypes(taskState(a, 't'));
      assert.ok(ev.includes('Killing') && ev.includes('Killed'), ev.join(', '));
    }
  } finally {
    await teardown(agent, agent.dataDir);
    await rm(tmp, { recursive: true, force: true });
  }
});

test('client: a batch job whose task exits 0 is complete and the job dead', async () => {
  const agent = await startDevAgent();
  const tmp = await mkdtemp(join(tmpdir(), 'cv-jobs-'));
  try {
    await runJob(agent.address, tmp, 'once', batchHcl);
    const alloc = await waitFor('complete batch alloc', async () => {
      const [a] = await jobAllocs(agent.address, 'once');
      return a && a.ClientStatus === 'complete' ? a : undefined;
    });
    const st = taskState(await getAlloc(agent.address, alloc.ID), 't');
    assert.equal(st.State, 'dead');
    assert.equal(st.Failed, false);
    const term = st.Events.find((e) => e.Type === 'Terminated');
    assert.equal(term?.ExitCode, 0);
    const job = await waitFor('job dead', async () => {
      const j = (await api<Job>(agent.address, 'GET', '/v1/job/once')).body;
      return j.Status === 'dead' ? j : undefined;
    });
    assert.equal(job.Status, 'dead');
  } finally {
    await teardown(agent, agent.dataDir);
    await rm(tmp, { recursive: true, force: true });
  }
});
