import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Allocation } from '../../src/structs/index.js';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { jobAllocs, runJob, sleeperJobHcl, startDevAgent, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

const SLEEPER = sleeperJobHcl('sleeper', 2);

// Fails at once, never restarted nor rescheduled: only `job eval -force-reschedule` replaces it.
const FAILER = `job "failer" {
  datacenters = ["*"]
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    update {
      max_parallel = 0
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/false"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`;

test("job init, allocs, deployments, eval, start and restart behave as Nomad's", async () => {
  const dir = await mkdtemp('/tmp/cv-');
  let agent: AgentProcess | undefined;
  try {
    agent = await startDevAgent({ dataDir: join(dir, 'data') });
    const a = agent.address;

    // job init writes a runnable example once, and refuses to overwrite it.
    const init = await runCli(a, ['job', 'init'], { cwd: dir });
    assert.equal(init.code, 0, init.stderr);
    assert.equal(init.stdout, 'Example job file written to example.nomad.hcl\n');
    assert.match(await readFile(join(dir, 'example.nomad.hcl'), 'utf8'), /job "example"/);
    const again = await runCli(a, ['job', 'init'], { cwd: dir });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /Job 'example.nomad.hcl' already exists/);
    const json = await runCli(a, ['job', 'init', '-short', '-json'], { cwd: dir });
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(await readFile(join(dir, 'example.nomad.json'), 'utf8')) as { Job: { ID: string } }).Job.ID, 'example');
    const validate = await runCli(a, ['job', 'validate', join(dir, 'example.nomad.hcl')]);
    assert.equal(validate.code, 0, validate.stdout + validate.stderr);

    await runJob(a, dir, 'sleeper', SLEEPER);
    const running = await waitRunning(a, 'sleeper', 2);

    const allocs = await runCli(a, ['job', 'allocs', 'sleep']);
    assert.equal(allocs.code, 0, allocs.stderr);
    assert.match(allocs.stdout, /^ID\s+Node ID\s+Task Group\s+Version\s+Desired\s+Status\s+Created\s+Modified\n/);
    for (const r of running) assert.ok(allocs.stdout.includes(r.ID.slice(0, 8)), allocs.stdout);
    const allocsJson = await runCli(a, ['job', 'allocs', '-json', 'sleeper']);
    assert.equal((JSON.parse(allocsJson.stdout) as AllocListStub[]).length, 2);

    const deployments = await runCli(a, ['job', 'deployments', 'sleeper']);
    assert.equal(deployments.code, 0, deployments.stderr);
    assert.match(deployments.stdout, /No deployments found|^ID\s+Job ID\s+Job Version\s+Status\s+Description/);

    // eval: a new evaluation, followed to its end or printed with -detach.
    const evalDetached = await runCli(a, ['job', 'eval', '-detach', 'sleeper']);
    assert.equal(evalDetached.code, 0, evalDetached.stderr);
    assert.match(evalDetached.stdout, /^Created eval ID: "[0-9a-f]{8}" \n$/);
    const evalMonitored = await runCli(a, ['job', 'eval', 'sleeper']);
    assert.equal(evalMonitored.code, 0, evalMonitored.stderr);
    assert.match(evalMonitored.stdout + evalMonitored.stderr, /finished with status "complete"/);

    // restart in place: the tasks restart, the allocations stay.
    const restart = await runCli(a, ['job', 'restart', '-yes', '-batch-size', '50%', 'sleeper']);
    assert.equal(restart.code, 0, restart.stdout + restart.stderr);
    assert.match(restart.stdout, /Restarting 2 allocations/);
    assert.match(restart.stdout, /Restarting running tasks in allocation "[0-9a-f]{8}" for group "g"/);
    assert.match(restart.stdout, /Job restarted successfully!/);
    await waitFor('restart events on both allocations', async () => {
      const all = await Promise.all(running.map(async (r) => (await api<Allocation>(a, 'GET', `/v1/allocation/${r.ID}`)).body));
      return all.every((x) => x.TaskStates?.['t']?.Events?.some((e) => e.Type === 'Restart Signaled')) ? true : undefined;
    });
    // -reschedule: each allocation stopped and replaced by a running one.
    const resched = await runCli(a, ['job', 'restart', '-reschedule', '-on-error', 'fail', '-group', 'g', 'sleeper']);
    assert.equal(resched.code, 0, resched.stdout + resched.stderr);
    const after = await jobAllocs(a, 'sleeper');
    assert.equal(after.filter((x) => x.DesiredStatus === 'run' && x.ClientStatus === 'running').length, 2);
    assert.ok(running.every((r) => after.find((x) => x.ID === r.ID)?.DesiredStatus === 'stop'));
    // Bad flags are usage errors naming the flag, nothing restarted.
    const bad = await runCli(a, ['job', 'restart', '-batch-size', 'x', 'sleeper']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Invalid -batch-size value "x"/);
    const ask = await runCli(a, ['job', 'restart', 'sleeper']);
    assert.notEqual(ask.code, 0);
    assert.match(ask.stderr, /"ask" cannot be used when terminal is not interactive/);

    // start: refused while running; after a stop, the job runs again.
    const notStopped = await runCli(a, ['job', 'start', 'sleeper']);
    assert.equal(notStopped.code, 1);
    assert.match(notStopped.stderr, /Job "sleeper" has not been stopped/);
    assert.equal((await runCli(a, ['job', 'stop', '-detach', 'sleeper'])).code, 0);
    await waitFor('the stopped job to have no running allocations', async () =>
      (await jobAllocs(a, 'sleeper')).every((x) => x.ClientStatus !== 'running') ? true : undefined,
    );
    const start = await runCli(a, ['job', 'start', '-detach', 'sleeper']);
    assert.equal(start.code, 0, start.stderr);
    assert.match(start.stdout, /^Job start successful\nEvaluation ID: [0-9a-f-]{36}\n$/);
    assert.equal((await api<{ Stop: boolean }>(a, 'GET', '/v1/job/sleeper')).body.Stop, false);
    await waitRunning(a, 'sleeper', 2);

    // eval -force-reschedule replaces a failed allocation whose policy forbids rescheduling.
    await runJob(a, dir, 'failer', FAILER);
    const failed = await waitFor('the failer allocation to fail', async () => (await jobAllocs(a, 'failer')).find((x) => x.ClientStatus === 'failed'));
    await runCli(a, ['job', 'eval', 'failer']);
    assert.equal((await jobAllocs(a, 'failer')).length, 1, 'a plain eval leaves the failed allocation alone');
    const forced = await runCli(a, ['job', 'eval', '-force-reschedule', 'failer']);
    assert.equal(forced.code, 0, forced.stdout + forced.stderr);
    await waitFor('a replacement of the failed allocation', async () => {
      const next = (await api<Allocation>(a, 'GET', `/v1/allocation/${failed.ID}`)).body.NextAllocation;
      return next ? next : undefined;
    });
  } finally {
    await teardown(agent, dir);
  }
});

test('operator api, operator metrics, agent-info and node config', async () => {
  const dir = await mkdtemp('/tmp/cv-');
  let server: AgentProcess | undefined;
  let client: AgentProcess | undefined;
  try {
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(dir, 's') });
    const a = server.address;

    const list = await runCli(a, ['operator', 'api', '/v1/jobs']);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout), []);
    const missing = await runCli(a, ['operator', 'api', '-X', 'DELETE', '/v1/job/nope']);
    assert.equal(missing.code, 1);
    assert.match(missing.stdout, /job not found/);
    const dry = await runCli(a, ['operator', 'api', '-dryrun', '-H', 'X-Test: yes', '-filter', 'ID == "x"', '/v1/jobs']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, `curl \\\n  -X GET \\\n  -H 'X-Test: yes' \\\n  ${a}/v1/jobs?filter=ID+%3D%3D+%22x%22\n`);
    const verbose = await runCli(a, ['operator', 'api', '-verbose', '/v1/status/leader']);
    assert.match(verbose.stderr, /^> GET .*\/v1\/status\/leader\n[\s\S]*< HTTP 200/);

    const metrics = await runCli(a, ['operator', 'metrics']);
    assert.equal(metrics.code, 0, metrics.stderr);
    assert.ok(Array.isArray((JSON.parse(metrics.stdout) as { Gauges: unknown[] }).Gauges));
    const prom = await runCli(a, ['operator', 'metrics', '-format', 'prometheus']);
    assert.match(prom.stdout, /^# (HELP|TYPE) /m);
    assert.notEqual((await runCli(a, ['operator', 'metrics', '-format', 'xml'])).code, 0);

    const info = await runCli(a, ['agent-info']);
    assert.equal(info.code, 0, info.stderr);
    assert.match(info.stdout, /^nomad\n {2}bootstrap = true\n[\s\S]*\n {2}server = true\n[\s\S]*^raft\n {2}applied_index = \d+/m);

    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(dir, 'c') });
    const servers = await runCli(client.address, ['node', 'config', '-servers']);
    assert.equal(servers.code, 0, servers.stderr);
    assert.equal(servers.stdout, `127.0.0.1:${server.port}\n`);
    const update = await runCli(client.address, ['node', 'config', '-update-servers', `127.0.0.1:${server.port}`, '127.0.0.1:1']);
    assert.equal(update.code, 0, update.stderr);
    assert.equal((await runCli(client.address, ['node', 'config', '-servers'])).stdout, `127.0.0.1:${server.port}\n127.0.0.1:1\n`);
    assert.equal((await api(client.address, 'PUT', '/v1/agent/servers')).status, 400);
    assert.notEqual((await runCli(client.address, ['node', 'config'])).code, 0);
    // A server's own client has no list to change.
    assert.equal((await runCli(a, ['node', 'config', '-update-servers', '127.0.0.1:1'])).code, 1);
  } finally {
    await client?.stop();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  }
});
