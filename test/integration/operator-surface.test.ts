/**
 * The operator's side of the API against a real -dev agent, through the HTTP API and the
 * `caravan` CLI (issue 32): the agent's text log and log_file, the runtime profiles, monitor
 * export, `operator debug` bundles (directory and archive), the gossip keyring answered as
 * Nomad's with encryption off, `deployment unblock` as Nomad CE, DriverConfigValidated, and
 * `node intro create` with ACLs off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FrameDecoder } from '../../src/cli/commands/monitor.js';
import type { Deployment, Node } from '../../src/structs/index.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';

const SERVICE_JOB = `
job "svc" {
  datacenters = ["dc1"]
  update {
    max_parallel     = 1
    min_healthy_time  = "5m"
    healthy_deadline  = "10m"
    progress_deadline = "15m"
  }
  group "g" {
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "10m"
      }
      resources {
        cpu    = 10
        memory = 16
      }
    }
  }
}`;

test('operator surface on a -dev agent: log format and file, profiles, monitor export, debug bundles, keyring, unblock, validate, intro', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'cv-opsurface-'));
  const logFile = join(tmp, 'logs', 'agent.log');
  const agent = await startAgent({ roleArgs: ['-dev'], extraArgs: ['-log-file', logFile] });
  try {
    const a = agent.address;
    const node = await waitFor('the dev node ready', async () => (await api<Node[]>(a, 'GET', '/v1/nodes')).body.find((n) => n.Status === 'ready'));

    // The agent's log: Nomad's text lines on stderr, and the same lines in log_file.
    await waitFor('node registered in the log', () => (/node registered/.test(agent.output().stderr) ? true : undefined));
    const stderr = agent.output().stderr;
    assert.match(stderr, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[INFO\] {2}client: node registered: node=[0-9a-f-]{36}$/m);
    assert.doesNotMatch(stderr, /^\{"level"/m, 'no JSON line on a text log');
    assert.match(readFileSync(logFile, 'utf8'), /\[INFO\] {2}client: node registered/);

    // Profiles: a CPU profile and a heap snapshot as Chrome DevTools reads them.
    const cpu = await fetch(`${a}/v1/agent/pprof/profile?seconds=1`);
    assert.equal(cpu.status, 200);
    assert.match(cpu.headers.get('content-disposition') ?? '', /filename="profile\.cpuprofile"/);
    const profile = (await cpu.json()) as { nodes: unknown[]; samples: number[]; startTime: number; endTime: number };
    assert.ok(profile.nodes.length > 0 && Array.isArray(profile.samples) && profile.endTime > profile.startTime);
    const heap = (await (await fetch(`${a}/v1/agent/pprof/heap`)).json()) as { snapshot: { meta: unknown; node_count: number }; nodes: number[] };
    assert.ok(heap.snapshot.meta && heap.snapshot.node_count > 0 && heap.nodes.length > 0);
    assert.match(await (await fetch(`${a}/v1/agent/pprof/goroutine?debug=1`)).text(), /active resources: \d+/);
    const unknown = await api(a, 'GET', '/v1/agent/pprof/block');
    assert.deepEqual([unknown.status, unknown.text], [404, 'Unknown profile: block']);
    // Naming this node or this server is this agent; naming both is Nomad's 400.
    assert.equal((await fetch(`${a}/v1/agent/pprof/threadcreate?node_id=${node.ID}`)).status, 200);
    const both = await api(a, 'GET', `/v1/agent/pprof/cmdline?node_id=${node.ID}&server_id=leader`);
    assert.deepEqual([both.status, both.text], [400, 'Cannot target node and server simultaneously']);

    // Monitor export: the agent's own log_file, framed or plain, and through the CLI.
    const framed = await fetch(`${a}/v1/agent/monitor/export?on_disk=true`);
    assert.equal(framed.status, 200);
    assert.match(new FrameDecoder().push(await framed.text()).join(''), /client: node registered/);
    assert.match(await (await fetch(`${a}/v1/agent/monitor/export?on_disk=true&plain=true`)).text(), /client: node registered/);
    const follow = await api(a, 'GET', '/v1/agent/monitor/export?on_disk=true&follow=true');
    assert.deepEqual([follow.status, follow.text], [400, 'Cannot follow log file']);
    const exported = await runCli(a, ['monitor', 'export', '-on-disk']);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /client: node registered/);

    // operator debug: a directory in Nomad's layout, then an archive in the working directory.
    const debug = await runCli(a, ['operator', 'debug', '-duration', '2s', '-interval', '2s', '-pprof-interval', '1s', '-output', tmp], { timeoutMs: 120_000 });
    assert.equal(debug.code, 0, debug.stderr);
    const bundle = join(tmp, readdirSync(tmp).find((d) => d.startsWith('caravan-debug-'))!);
    const server = readdirSync(join(bundle, 'server'))[0]!;
    for (const f of ['cluster/agent-self.json', 'cluster/members.json', 'cluster/nodes.json', 'cluster/cli-flags.json', 'interval/0000/jobs.json', 'interval/0000/operator-raft.json', 'index.json', 'index.html']) {
      assert.ok(existsSync(join(bundle, f)), `${f} in the bundle`);
    }
    for (const dir of [`server/${server}`, `client/${node.ID}`]) {
      const cpuFile = JSON.parse(readFileSync(join(bundle, dir, 'profile_0000.cpuprofile'), 'utf8')) as { nodes: unknown[] };
      assert.ok(cpuFile.nodes.length > 0, `${dir}: a CPU profile`);
      const snap = JSON.parse(readFileSync(join(bundle, dir, 'heap.heapsnapshot'), 'utf8')) as { snapshot: { meta: unknown } };
      assert.ok(snap.snapshot.meta, `${dir}: a heap snapshot`);
      for (const f of ['goroutine-debug1.txt', 'goroutine-debug2.txt', 'goroutine.json', 'trace.json', 'allocs.heapprofile', 'threadcreate.json', 'agent-host.json', 'monitor.log']) {
        assert.ok(existsSync(join(bundle, dir, f)), `${dir}/${f}`);
      }
    }
    const index = JSON.parse(readFileSync(join(bundle, 'index.json'), 'utf8')) as string[];
    assert.ok(index.includes(`client/${node.ID}/heap.heapsnapshot`), index.join(', '));
    const archived = await runCli(a, ['operator', 'debug', '-duration', '1s', '-interval', '1s', '-pprof-duration', '1s', '-pprof-interval', '1s', '-server-id', 'leader', '-node-id', node.ID.slice(0, 8)], { cwd: tmp, timeoutMs: 120_000 });
    assert.equal(archived.code, 0, archived.stderr);
    assert.match(archived.stdout, /Created debug archive: .*caravan-debug-[\d-]+Z\.tar\.gz/);
    assert.ok(readdirSync(tmp).some((f) => f.endsWith('.tar.gz')));
    const taken = await runCli(a, ['operator', 'debug', '-duration', '1s', '-interval', '1s', '-output', tmp, '-node-id', 'ffff']);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /Failed to retrieve clients, 0 nodes found in list: ffff/);

    // Gossip keyring: Nomad's answers with gossip encryption off.
    const list = await api(a, 'GET', '/v1/agent/keyring/list');
    assert.deepEqual([list.status, list.text], [500, '1/1 nodes reported failure']);
    const badKey = await api(a, 'PUT', '/v1/agent/keyring/install', { Key: 'abc$' });
    assert.deepEqual([badKey.status, badKey.text], [500, 'illegal base64 data at input byte 3']);
    const key = (await runCli(a, ['operator', 'gossip', 'keyring', 'generate'])).stdout.trim();
    assert.equal(Buffer.from(key, 'base64').length, 32);
    const use = await api(a, 'PUT', '/v1/agent/keyring/use', { Key: key });
    assert.deepEqual([use.status, use.text], [500, '1/1 nodes reported failure']);
    const cliList = await runCli(a, ['operator', 'gossip', 'keyring', 'list']);
    assert.equal(cliList.code, 1);
    assert.match(cliList.stdout, /Gathering installed encryption keys\.\.\./);
    assert.match(cliList.stderr, /^error: Unexpected response code: 500 \(1\/1 nodes reported failure\)$/m);
    const cliInstall = await runCli(a, ['operator', 'gossip', 'keyring', 'install', key]);
    assert.equal(cliInstall.code, 1);
    assert.match(cliInstall.stdout, /Installing new gossip encryption key\.\.\./);

    // Validate: the server answered, so driver configs count as validated (Nomad's server says so).
    const parsed = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: SERVICE_JOB, Canonicalize: true });
    const validated = await api<{ DriverConfigValidated: boolean; Error: string }>(a, 'PUT', '/v1/validate/job', { Job: parsed.body });
    assert.deepEqual([validated.status, validated.body.DriverConfigValidated, validated.body.Error], [200, true, '']);

    // Client introduction with ACLs off: a token, through the API and the CLI.
    const intro = await api<{ JWT: string }>(a, 'PUT', '/v1/acl/identity/client-introduction-token', { NodeName: 'n2' });
    assert.equal(intro.status, 200, intro.text);
    assert.equal(intro.body.JWT.split('.').length, 3);
    const introCli = await runCli(a, ['node', 'intro', 'create', '-node-name', 'n3']);
    assert.equal(introCli.code, 0, introCli.stderr);
    assert.match(introCli.stdout, /Successfully generated client introduction token:\n\n[\w-]+\.[\w-]+\.[\w-]+/);

    // Deployment unblock: Nomad CE's empty success on a live deployment, through API and CLI.
    const file = join(tmp, 'svc.hcl');
    await writeFile(file, SERVICE_JOB);
    const run = await runCli(a, ['job', 'run', '-detach', file]);
    assert.equal(run.code, 0, run.stderr);
    const d = await waitFor('the deployment', async () => (await api<Deployment[]>(a, 'GET', '/v1/job/svc/deployments')).body[0]);
    const unblock = await api<{ EvalID: string }>(a, 'PUT', `/v1/deployment/unblock/${d.ID}`, { DeploymentID: d.ID });
    assert.equal(unblock.status, 200, unblock.text);
    assert.equal(unblock.body.EvalID, '');
    const unblockCli = await runCli(a, ['deployment', 'unblock', d.ID.slice(0, 8)]);
    assert.equal(unblockCli.code, 0, unblockCli.stderr);
    assert.match(unblockCli.stdout, new RegExp(`Deployment "${d.ID.slice(0, 8)}" unblocked`));
    assert.equal((await api(a, 'PUT', '/v1/deployment/unblock/00000000-0000-0000-0000-000000000000')).status, 404);
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
});

test('-log-json writes the agent log as JSON lines; a bad log setting is a clear configuration error', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], extraArgs: ['-log-json'] });
  try {
    await waitFor('a log line', () => (agent.output().stderr.includes('\n') ? true : undefined));
    const first = agent.output().stderr.split('\n').find((l) => l.trim() !== '')!;
    const parsed = JSON.parse(first) as { level: number; msg: string };
    assert.equal(typeof parsed.level, 'number');
    assert.equal(typeof parsed.msg, 'string');
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
  const bad = await runCli('http://127.0.0.1:1', ['agent', '-dev', '-log-rotate-duration', 'soon']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Error loading configuration: -log-rotate-duration: invalid duration "soon"/);
});

test('a single server (embedded log) answers the raft and membership operations as Nomad', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    const self = a.replace('http://', '');
    const none = await api(a, 'PUT', '/v1/operator/raft/transfer-leadership');
    assert.deepEqual([none.status, none.text], [400, 'cannot transfer leadership: there is no other server to transfer it to']);
    const toSelf = await api<{ Noop: boolean }>(a, 'PUT', `/v1/operator/raft/transfer-leadership?address=${self}`);
    assert.deepEqual([toSelf.status, toSelf.body.Noop], [200, true]);
    const cli = await runCli(a, ['operator', 'raft', 'transfer-leadership']);
    assert.equal(cli.code, 1);
    assert.match(cli.stderr, /Error transferring leadership to peer: .*no other server/);
    assert.equal((await api(a, 'DELETE', '/v1/operator/raft/peer?address=127.0.0.1:1')).text, 'address "127.0.0.1:1" was not found in the Raft configuration');
    assert.match((await api(a, 'DELETE', `/v1/operator/raft/peer?address=${self}`)).text, /is alive/);
    const removeCli = await runCli(a, ['operator', 'raft', 'remove-peer']);
    assert.equal(removeCli.code, 1);
    assert.equal((await api(a, 'PUT', '/v1/agent/force-leave?node=gone')).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/agent/force-leave?node=gone&prune=maybe')).text, 'invalid prune value');
    const left = await runCli(a, ['server', 'force-leave', 'gone']);
    assert.equal(left.code, 0, left.stderr);
    const joined = await runCli(a, ['server', 'join', self]);
    assert.equal(joined.code, 0, joined.stderr);
    assert.match(joined.stdout, /Joined 1 servers successfully/);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
