/**
 * What an agent's shutdown (SIGTERM) leaves behind, with real agents and real processes:
 * a -dev agent destroys its allocations as Nomad's does — no task, no supervisor, no data dir
 * left; a non-dev agent leaves its tasks running, and the next agent on its data dir reattaches
 * them with the same PIDs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, CARAVAN_BIN, freePort, REPO_ROOT, startAgent } from './helpers/agent-process.js';
import { getAlloc, killDataDirProcesses, pidAlive, runJob, taskPids, taskState, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

const sleepHcl = `
job "sleepers" {
  datacenters = ["*"]
  group "g" {
    count = 2
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

/** The supervisor's PID from its pid file under the client's data dir. */
async function supervisorPid(dataDir: string): Promise<number> {
  return Number((await readFile(join(dataDir, 'client', 'supervisor', 'supervisor.pid'), 'utf8')).trim());
}

test('agent -dev: SIGTERM destroys every allocation and leaves no process and no data dir', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const address = `http://127.0.0.1:${port}`;
  // No -data-dir: the dev agent makes (and must remove) a temporary one.
  const proc = spawn(process.execPath, [CARAVAN_BIN, 'agent', '-dev', '-bind', '127.0.0.1', '-http-port', String(port)], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const tmp = await mkdtemp(join(tmpdir(), 'cv-shutdown-'));
  let dataDir = '';
  try {
    await waitFor('the dev agent', async () => ((await fetch(`${address}/v1/agent/health`)).ok ? true : undefined));
    dataDir = (await api<{ config: { DataDir: string } }>(address, 'GET', '/v1/agent/self')).body.config.DataDir;
    assert.ok(dataDir && existsSync(dataDir), `data dir ${dataDir}`);
    await runJob(address, tmp, 'sleepers', sleepHcl);
    const allocs = await waitRunning(address, 'sleepers', 2, 30_000);
    const pids: number[] = [];
    for (const a of allocs) pids.push(await waitFor(`pid of ${a.ID}`, async () => (await taskPids(a.ID, 't'))[0]));
    const supervisor = await supervisorPid(dataDir);
    assert.ok(pidAlive(supervisor), 'the supervisor runs');

    proc.kill('SIGTERM');
    const timeout = new Promise<string>((r) => setTimeout(() => r('still running after 30 s'), 30_000).unref());
    assert.equal(await Promise.race([exited, timeout]), 0, stderr.slice(-3000));
    for (const p of pids) assert.equal(pidAlive(p), false, `task pid ${p} outlived the dev agent`);
    await waitFor('the supervisor to exit', () => (pidAlive(supervisor) ? undefined : true), 5_000, 50);
    assert.equal(existsSync(dataDir), false, `the temporary data dir ${dataDir} was left behind`);
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    if (dataDir) {
      await killDataDirProcesses(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
    await rm(tmp, { recursive: true, force: true });
  }
});

test('agent (not -dev): SIGTERM leaves the tasks running and the next agent reattaches them', { timeout: 120_000 }, async () => {
  const dataDir = await mkdtemp('/tmp/cv-');
  const tmp = await mkdtemp(join(tmpdir(), 'cv-shutdown-'));
  let agent = await startAgent({ roleArgs: ['-server', '-client'], dataDir });
  try {
    await runJob(agent.address, tmp, 'sleepers', sleepHcl);
    const allocs = await waitRunning(agent.address, 'sleepers', 2, 30_000);
    const pids = new Map<string, number>();
    for (const a of allocs) pids.set(a.ID, await waitFor(`pid of ${a.ID}`, async () => (await taskPids(a.ID, 't'))[0]));
    const supervisor = await supervisorPid(dataDir);

    assert.equal(await agent.stop(), 0);
    for (const [id, p] of pids) assert.ok(pidAlive(p), `task of ${id} (pid ${p}) stopped with the agent`);
    assert.ok(pidAlive(supervisor), 'the supervisor stopped with the agent');

    agent = await startAgent({ roleArgs: ['-server', '-client'], dataDir, port: agent.port });
    await waitFor('reattached tasks', async () => {
      const all = await Promise.all([...pids.keys()].map((id) => getAlloc(agent.address, id)));
      return all.every((a) => a.ClientStatus === 'running') ? all : undefined;
    });
    for (const [id, pid] of pids) {
      const st = taskState(await getAlloc(agent.address, id), 't');
      assert.equal(st.Restarts, 0, id);
      assert.deepEqual(await taskPids(id, 't'), [pid], `${id} runs under the same pid`);
    }
  } finally {
    await teardown(agent, dataDir);
    await rm(tmp, { recursive: true, force: true });
  }
});

test('npm run dev (scripts/dev.mjs): Ctrl-C stops the agent, its example tasks and its supervisor, and removes its data dir', { timeout: 120_000 }, async () => {
  const port = await freePort();
  const address = `http://127.0.0.1:${port}`;
  // Its own process group, as a terminal's foreground job: Ctrl-C signals the whole group.
  const dev = spawn(process.execPath, ['scripts/dev.mjs'], { cwd: REPO_ROOT, env: { ...process.env, CARAVAN_ADDR: address }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  dev.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  dev.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((r) => dev.once('exit', (code) => r(code)));
  let dataDir = '';
  try {
    await waitFor('the example to run', () => (out.includes('The example is running') ? true : undefined), 60_000);
    dataDir = (await api<{ config: { DataDir: string } }>(address, 'GET', '/v1/agent/self')).body.config.DataDir;
    await waitRunning(address, 'web', 3, 30_000);
    process.kill(-dev.pid!, 'SIGINT');
    const timeout = new Promise<string>((r) => setTimeout(() => r('still running after 30 s'), 30_000).unref());
    assert.equal(await Promise.race([exited, timeout]), 0, out.slice(-2000));
    await waitFor('every process of the dev data dir to end', async () => ((await dataDirProcessCount(dataDir)) === 0 ? true : undefined), 10_000, 100);
    assert.equal(existsSync(dataDir), false, `the temporary data dir ${dataDir} was left behind`);
  } finally {
    if (dev.exitCode === null && dev.signalCode === null) process.kill(-dev.pid!, 'SIGKILL');
    if (dataDir) {
      await killDataDirProcesses(dataDir);
      await rm(dataDir, { recursive: true, force: true });
    }
  }
});

/** How many live processes name `dataDir` in their command line or environment. */
async function dataDirProcessCount(dataDir: string): Promise<number> {
  const { readdir, readFile: read } = await import('node:fs/promises');
  let n = 0;
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const [env, cmd] = await Promise.all([read(`/proc/${name}/environ`, 'utf8'), read(`/proc/${name}/cmdline`, 'utf8')]);
      if ((env.includes(dataDir) || cmd.includes(dataDir)) && pidAlive(Number(name))) n++;
    } catch {
      // gone
    }
  }
  return n;
}
