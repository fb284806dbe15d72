import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { CARAVAN_BIN, REPO_ROOT, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { runJob, teardown, waitFor } from './helpers/client-agent.js';

// Exits 3 at once: restarted once after 1s, then not restarted (mode "fail"), never rescheduled.
const CRASHER = `job "crasher" {
  datacenters = ["*"]
  type = "batch"
  group "g" {
    restart {
      attempts = 1
      delay    = "1s"
      interval = "1h"
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    network {
      port "http" {}
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exit 3"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`;

// No node has this driver: nothing is placed, the evaluation blocks.
const UNPLACEABLE = `job "nodriver" {
  datacenters = ["*"]
  group "g" {
    task "t" {
      driver = "qemu"
      config {
        image_path = "/nonexistent.img"
      }
    }
  }
}`;

interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** The agent's JSON log lines on stderr; asserts each carries exactly one msg. */
function logLines(agent: AgentProcess): LogLine[] {
  const out: LogLine[] = [];
  for (const raw of agent.output().stderr.split('\n')) {
    if (!raw.startsWith('{')) continue;
    assert.equal(raw.match(/"msg":/g)?.length, 1, `one msg a line: ${raw}`);
    out.push(JSON.parse(raw) as LogLine);
  }
  return out;
}

test('the agent log tells a crash loop and a placement failure, and monitor -log-level debug streams them from an info agent', async () => {
  const dir = await mkdtemp('/tmp/cv-');
  let agent: AgentProcess | undefined;
  const monitor: { out: string } = { out: '' };
  try {
    // The helper starts agents at debug; a later -log-level wins, so this one writes info.
    agent = await startAgent({ roleArgs: ['-dev'], dataDir: dir, extraArgs: ['-log-level', 'info', '-log-json'] });
    const a = agent.address;
    const cli = spawn(process.execPath, [CARAVAN_BIN, 'monitor', '-log-level', 'debug'], { cwd: REPO_ROOT, env: { ...process.env, CARAVAN_ADDR: a, NOMAD_ADDR: '' } });
    cli.stdout.setEncoding('utf8').on('data', (d: string) => (monitor.out += d));
    try {
      // The monitor is subscribed once it has a line to show: wait for the node's own heartbeat-era lines.
      await new Promise((r) => setTimeout(r, 500));
      await runJob(a, dir, 'crasher', CRASHER);
      await runJob(a, dir, 'nodriver', UNPLACEABLE);

      const lines = await waitFor('the crash loop to end in the log', () => {
        const ls = logLines(agent!);
        return ls.some((l) => l.msg === 'not restarting task') && ls.some((l) => l.msg === 'failed to place allocations') ? ls : undefined;
      });
      const crasher = lines.filter((l) => l.component === 'client' && typeof l.alloc_id === 'string' && l.task === 't');
      const types = crasher.map((l) => `${l.msg}/${String(l.type)}`);
      for (const want of ['Task event/Received', 'Task event/Started', 'Task event/Terminated', 'restarting task/Restarting', 'not restarting task/Not Restarting']) {
        assert.ok(types.includes(want), `${want} in ${types.join(', ')}`);
      }
      const terminated = crasher.find((l) => l.type === 'Terminated')!;
      assert.equal(terminated.level, 30);
      assert.equal(terminated.exit_code, 3);
      assert.equal(terminated.message, 'Exit Code: 3');
      const restarting = crasher.find((l) => l.msg === 'restarting task')!;
      assert.equal(restarting.reason, 'Restart within policy');
      // The restart delay with Nomad's jitter (up to a quarter more).
      assert.match(String(restarting.delay), /^1(\.\d+)?s$/);
      const notRestarting = crasher.find((l) => l.msg === 'not restarting task')!;
      assert.match(String(notRestarting.reason), /Exceeded allowed attempts 1 in interval/);

      const server = lines.filter((l) => l.component === 'server');
      assert.ok(server.some((l) => l.msg === 'cluster leadership acquired'), 'leadership');
      assert.ok(server.some((l) => l.msg === 'job registered' && l.job_id === 'crasher'), 'job registered');
      const processed = server.find((l) => l.msg === 'evaluation processed' && l.job_id === 'crasher' && l.triggered_by === 'job-register')!;
      assert.ok(processed, 'the crasher evaluation is logged');
      assert.equal(processed.placed, 1);
      const failure = server.find((l) => l.msg === 'failed to place allocations')!;
      assert.equal(failure.level, 40);
      assert.equal(failure.job_id, 'nodriver');
      assert.equal(failure.task_group, 'g');
      assert.equal(failure.reason, 'Constraint "missing drivers": 1 nodes excluded by filter');
      // An info agent writes no debug line to stderr...
      assert.ok(!lines.some((l) => l.level < 30), 'no debug line on stderr');

      // ...but the monitor asked for debug and gets them, in Nomad's text format (hclog quotes values with spaces).
      await waitFor('the monitor to print the failure', () => (monitor.out.includes('failed to place allocations') ? true : undefined));
      assert.match(monitor.out, /\[DEBUG\] server: evaluation created: eval_id=/);
      assert.match(monitor.out, /\[INFO\] {2}client: Task event: alloc_id=\S+ task=t type=Terminated message="Exit Code: 3" exit_code=3/);
      assert.match(monitor.out, /\[WARN\] {2}server: failed to place allocations: eval_id=\S+ job_id=nodriver namespace=default task_group=g failed=1 reason="Constraint \\"missing drivers\\": 1 nodes excluded by filter"/);

      // alloc status shows the group's port and the task's restarts and events, newest first.
      const crashed = await runCli(a, ['alloc', 'status', String(crasher[0]!.alloc_id)]);
      assert.equal(crashed.code, 0, crashed.stderr);
      assert.match(crashed.stdout, /\n\nAllocation Addresses \(mode = "host"\)\nLabel +Dynamic +Address\nhttp +yes +\d+\.\d+\.\d+\.\d+:\d+\n/);
      assert.match(crashed.stdout, /Task "t" is "dead"\nTask Resources:\nCPU +Memory +Disk +Addresses\n\d+ MHz +32 MiB +\d+ MiB/);
      assert.match(crashed.stdout, /Total Restarts = 1\n/);
      assert.match(crashed.stdout, /Recent Events:\nTime +Type +Description\n\S+Z +Not Restarting +Exceeded allowed attempts 1/);

      // job status says why nothing was placed, as Nomad's.
      const status = await runCli(a, ['job', 'status', 'nodriver']);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /\n\nPlacement Failure\nTask Group "g":\n {2}\* Constraint "missing drivers": 1 nodes excluded by filter\n\n/);
      assert.match(status.stdout, /Allocations\nNo allocations placed\n$/);
    } finally {
      cli.kill('SIGTERM');
    }
  } finally {
    await teardown(agent, dir);
  }
});
