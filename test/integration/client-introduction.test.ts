/**
 * Client introduction through real agents: a server with ACLs and `client_introduction {
 * enforcement = "strict" }`. A client agent without an introduction token never registers (the
 * server logs Nomad's line), nor does a raw registration with a made-up node ID; `node intro
 * create` needs node:write and prints the token as Nomad's; a client started with it registers
 * and runs a job, and after a restart without the token it comes back with its SecretID alone.
 * No log line of either agent carries the token.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Node, NodeListStub } from '../../src/structs/index.js';
import type { AclToken } from '../../src/structs/acl.js';
import { call, freePort, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { sleeperJobHcl, waitFor } from './helpers/client-agent.js';
import { killDataDirProcesses } from './helpers/processes.js';
import { mockNode } from '../mock/factories.js';

test('strict client introduction: only a client with a valid introduction token joins', async () => {
  const tmp = await mkdtemp('/tmp/cv-intro-');
  const agents: AgentProcess[] = [];
  try {
    const cfg = join(tmp, 'server.hcl');
    await writeFile(cfg, 'acl {\n  enabled = true\n}\nserver {\n  client_introduction {\n    enforcement = "strict"\n  }\n}\n');
    const clientCfg = join(tmp, 'client.hcl');
    await writeFile(clientCfg, 'acl {\n  enabled = true\n}\n');
    const server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), extraArgs: ['-config', cfg] });
    agents.push(server);
    const s = server.address;
    const boot = await runCli(s, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    const mgmt = (JSON.parse(boot.stdout) as AclToken).SecretID;
    const nodes = async () => (await call<NodeListStub[]>(s, 'GET', '/v1/nodes', mgmt)).body;

    // A client without a token starts but is refused registration, and says why.
    const bare = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'bare'), extraArgs: ['-config', clientCfg, '-node', 'bare'] });
    agents.push(bare);
    await waitFor('the bare client refused', () => (/no introduction token \(client_introduction enforcement is \\?"strict\\?"\)/.test(bare.output().stderr) ? true : undefined));
    await waitFor('the server to log the refusal', () => (/node registration without introduction token/.test(server.output().stderr) ? true : undefined));
    assert.deepEqual(await nodes(), []);

    // A raw registration with a made-up node: refused, nothing registered.
    const made = mockNode({ Name: 'made-up' });
    const raw = await call(s, 'PUT', '/v1/internal/node/register', made.SecretID, { Node: made });
    assert.equal(raw.status, 403);
    assert.match(raw.text, /Permission denied: node registration refused: no introduction token/);
    assert.deepEqual(await nodes(), []);

    // Minting needs node:write; the CLI prints the token as Nomad's.
    const anon = await runCli(s, ['node', 'intro', 'create']);
    assert.equal(anon.code, 1);
    assert.match(anon.stderr, /Error generating introduction token: .*Permission denied/);
    const badTtl = await runCli(s, ['node', 'intro', 'create', '-ttl', 'soon', '-token', mgmt]);
    assert.equal(badTtl.code, 2, 'a usage error, as every bad flag');
    assert.match(badTtl.stderr, /Error parsing TTL/);
    const created = await runCli(s, ['node', 'intro', 'create', '-node-name', 'good', '-node-pool', 'default', '-ttl', '15m', '-token', mgmt]);
    assert.equal(created.code, 0, created.stderr);
    const m = /^Successfully generated client introduction token:\n\n(\S+)\n$/.exec(created.stdout);
    assert.ok(m, created.stdout);
    const jwt = m[1]!;
    const asJson = await runCli(s, ['node', 'intro', 'create', '-json', '-token', mgmt]);
    assert.equal(asJson.code, 0, asJson.stderr);
    assert.deepEqual(Object.keys(JSON.parse(asJson.stdout) as object), ['JWT']);

    // A token bound to another name does not let "bare" in either (a raw attempt with its body).
    const wrongName = await call(s, 'PUT', '/v1/internal/node/register', jwt, { Node: { ...made, Name: 'not-good' } });
    assert.equal(wrongName.status, 403);
    assert.match(wrongName.text, /the introduction token is for node name \\?"good\\?", not \\?"not-good\\?"/);

    // The client with the token registers and runs a job.
    const goodDir = join(tmp, 'good');
    const goodPort = await freePort();
    const good = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: goodDir, port: goodPort, extraArgs: ['-config', clientCfg, '-node', 'good', '-client-intro-token', jwt] });
    agents.push(good);
    const node = await waitFor('the good node ready', async () => (await nodes()).find((n) => n.Name === 'good' && n.Status === 'ready'));
    assert.deepEqual((await nodes()).map((n) => n.Name), ['good'], 'only the introduced node joined');
    const jobFile = join(tmp, 'sleeper.hcl');
    await writeFile(jobFile, sleeperJobHcl('sleeper', 1));
    const run = await runCli(s, ['job', 'run', '-detach', jobFile, '-token', mgmt]);
    assert.equal(run.code, 0, run.stderr);
    await waitFor('the job running on the introduced node', async () => (await call<AllocListStub[]>(s, 'GET', '/v1/job/sleeper/allocations', mgmt)).body.find((a) => a.ClientStatus === 'running' && a.NodeID === node.ID), 30_000);

    // Restarted without its token (long expired in real life), the node comes back with its SecretID.
    await good.stop();
    const again = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: goodDir, port: goodPort, extraArgs: ['-config', clientCfg, '-node', 'good'] });
    agents.push(again);
    await waitFor('the node registered again', async () => {
      const n = (await call<Node>(s, 'GET', `/v1/node/${node.ID}`, mgmt)).body;
      return n.Status === 'ready' && /node registered/.test(again.output().stderr) ? n : undefined;
    });

    // The token never reaches a log line.
    const sig = jwt.split('.')[2]!;
    for (const a of agents) {
      const o = a.output();
      assert.ok(!o.stdout.includes(sig) && !o.stderr.includes(sig), `agent ${a.dataDir} logged the introduction token`);
    }
  } finally {
    for (const a of agents.reverse()) await a.stop().catch(() => undefined);
    for (const a of agents) await killDataDirProcesses(a.dataDir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});
