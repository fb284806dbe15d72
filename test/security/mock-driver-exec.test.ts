/**
 * Issue 26 item 1: the mock driver ran exec'd commands on the host as the agent's user, was
 * offered by every client, and alloc-node-exec was asked only of a driver named raw_exec — so a
 * job submitter with alloc-exec had a root shell. Attacked here through real agents:
 * - a non-dev agent whose config does not enable mock_driver does not offer it at all;
 * - with ACLs on, a token holding submit-job + alloc-exec on its namespace cannot exec into a
 *   mock_driver or a raw_exec allocation (403), neither through the server (forwarded) nor on
 *   the client agent itself, and the command never runs; alloc-node-exec can; a driver that
 *   isolates the filesystem (exec) needs alloc-exec only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Evaluation, Node, NodeListStub } from '../../src/structs/index.js';
import type { AclToken } from '../../src/structs/acl.js';
import { call, execOnce, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { teardown, waitFor } from '../integration/helpers/client-agent.js';
import { killDataDirProcesses } from '../integration/helpers/processes.js';

/** One exec of `command` in task "t" with a token: its stdout, or the close reason when refused. */
async function exec(address: string, allocId: string, token: string, command: string[]): Promise<{ stdout: string; closeReason: string }> {
  const r = await execOnce(address, allocId, command, { 'X-Nomad-Token': token });
  return { stdout: r.stdout, closeReason: r.reason };
}


/** A one-task job "t" of `driver` in `namespace`, as API JSON. */
function jobOf(id: string, namespace: string, driver: string, config: Record<string, unknown>): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Namespace: namespace,
      Type: 'service',
      Datacenters: ['*'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: driver, Config: config, Resources: { CPU: 20, MemoryMB: 32 } }] }],
    },
  };
}

const MOCK_CONFIG = { run_for: '1h' };
const SLEEP_CONFIG = { command: '/bin/sleep', args: ['300'] };

test('a non-dev agent whose config does not enable mock_driver does not offer it: the job stays unplaced with "missing drivers"', async () => {
  const dataDir = await mkdtemp('/tmp/cv-mockx-');
  let agent: AgentProcess | undefined;
  try {
    agent = await startAgent({ roleArgs: ['-server', '-client'], dataDir });
    const a = agent.address;
    const stub = await waitFor('the node', async () => (await call<NodeListStub[]>(a, 'GET', '/v1/nodes')).body.find((n) => n.Status === 'ready'));
    const node = (await call<Node>(a, 'GET', `/v1/node/${stub.ID}`)).body;
    assert.equal(node.Drivers['mock_driver'], undefined, `drivers: ${Object.keys(node.Drivers).join(', ')}`);
    assert.equal(node.Attributes['driver.mock_driver'], undefined);
    assert.equal(node.Attributes['driver.mock'], undefined);

    assert.equal((await call(a, 'PUT', '/v1/jobs', undefined, jobOf('mock', 'default', 'mock_driver', MOCK_CONFIG))).status, 200);
    const ev = await waitFor('the failed placement', async () => (await call<Evaluation[]>(a, 'GET', '/v1/job/mock/evaluations')).body.find((e) => e.FailedTGAllocs?.['g']));
    assert.equal(ev.FailedTGAllocs!['g']!.ConstraintFiltered?.['missing drivers'], 1, JSON.stringify(ev.FailedTGAllocs));
    assert.deepEqual((await call<unknown[]>(a, 'GET', '/v1/job/mock/allocations')).body, []);
  } finally {
    await teardown(agent, dataDir);
  }
});

test('with ACLs, submit-job + alloc-exec cannot exec into a mock_driver or raw_exec allocation; alloc-node-exec can', async () => {
  const tmp = await mkdtemp('/tmp/cv-mockx-');
  let server: AgentProcess | undefined;
  let client: AgentProcess | undefined;
  try {
    const aclConfig = join(tmp, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled   = true\n  token_ttl = "1s"\n}\n');
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), extraArgs: ['-config', aclConfig] });
    // The client enables the mock driver explicitly (raw_exec too: the helper's default config).
    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c'), mockDriver: true, extraArgs: ['-config', aclConfig] });
    const s = server.address;

    const boot = await call<AclToken>(s, 'PUT', '/v1/acl/bootstrap');
    assert.equal(boot.status, 200, boot.text);
    const mgmt = boot.body.SecretID;
    assert.equal((await call(s, 'PUT', '/v1/namespace/team-a', mgmt, { Name: 'team-a' })).status, 200);
    const policies = {
      submitter: 'namespace "team-a" { capabilities = ["submit-job", "alloc-exec", "read-job"] }',
      'node-exec': 'namespace "team-a" { capabilities = ["submit-job", "alloc-exec", "alloc-node-exec", "read-job"] }',
    };
    const tokens: Record<string, string> = {};
    for (const [name, rules] of Object.entries(policies)) {
      const p = await call(s, 'PUT', `/v1/acl/policy/${name}`, mgmt, { Name: name, Rules: rules });
      assert.equal(p.status, 200, p.text);
      const t = await call<AclToken>(s, 'PUT', '/v1/acl/token', mgmt, { Name: name, Type: 'client', Policies: [name] });
      assert.equal(t.status, 200, t.text);
      tokens[name] = t.body.SecretID;
    }
    const submitter = tokens['submitter']!;
    const nodeExec = tokens['node-exec']!;

    const node = await waitFor('the client node ready', async () => (await call<Node[]>(s, 'GET', '/v1/nodes', mgmt)).body.find?.((n) => n.Status === 'ready'));
    const full = (await call<Node>(s, 'GET', `/v1/node/${node.ID}`, mgmt)).body;
    assert.equal(full.Drivers['mock_driver']?.Detected, true, 'the explicit config enables the mock driver');
    const execDetected = full.Drivers['exec']?.Detected === true && full.Drivers['exec']?.Healthy === true;

    // The submitter runs its jobs: allowed by submit-job.
    const jobs: [string, string, Record<string, unknown>][] = [
      ['mock', 'mock_driver', MOCK_CONFIG],
      ['raw', 'raw_exec', SLEEP_CONFIG],
      ...(execDetected ? [['isolated', 'exec', SLEEP_CONFIG] as [string, string, Record<string, unknown>]] : []),
    ];
    for (const [id, driver, config] of jobs) {
      const reg = await call(s, 'PUT', '/v1/jobs', submitter, jobOf(id, 'team-a', driver, config));
      assert.equal(reg.status, 200, reg.text);
    }
    const running = async (id: string) =>
      waitFor(`${id} running`, async () => (await call<AllocListStub[]>(s, 'GET', `/v1/job/${id}/allocations?namespace=team-a`, mgmt)).body.find?.((a) => a.ClientStatus === 'running'), 30_000);

    // A host file the attempt would create (in a directory made for the purpose): it must never appear.
    const marker = join(tmp, 'pwned');
    const attack = ['/bin/sh', '-c', `id; touch ${marker}; echo exec-ran`];
    for (const id of ['mock', 'raw']) {
      const alloc = await running(id);
      for (const [where, address] of [['through the server', s], ['on the client agent', client.address]] as const) {
        const refused = await exec(address, alloc.ID, submitter, attack);
        assert.match(refused.closeReason, /Permission denied/, `${id} ${where}: ${JSON.stringify(refused)}`);
        assert.equal(refused.stdout, '', `${id} ${where}`);
        assert.equal(existsSync(marker), false, `${id} ${where}: the command ran on the host`);
      }
      // alloc-node-exec is what a shell on the host takes.
      const allowed = await exec(s, alloc.ID, nodeExec, ['/bin/echo', 'node-exec-ok']);
      assert.match(allowed.stdout, /node-exec-ok/, `${id}: ${JSON.stringify(allowed)}`);
      const onClient = await exec(client.address, alloc.ID, nodeExec, ['/bin/echo', 'node-exec-ok']);
      assert.match(onClient.stdout, /node-exec-ok/, `${id} on the client: ${JSON.stringify(onClient)}`);
    }

    // A driver that isolates the filesystem: alloc-exec is enough (the gate follows isolation, not a list of names).
    if (execDetected) {
      const alloc = await running('isolated');
      const inSandbox = await exec(s, alloc.ID, submitter, ['/bin/echo', 'sandboxed-ok']);
      assert.match(inSandbox.stdout, /sandboxed-ok/, JSON.stringify(inSandbox));
    }
  } finally {
    await client?.stop();
    await server?.stop();
    for (const dir of [join(tmp, 'c'), join(tmp, 's')]) await killDataDirProcesses(dir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});
