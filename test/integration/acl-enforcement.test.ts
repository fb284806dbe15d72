/**
 * ACLs on, through real agents: a server and a client-only agent (which resolves tokens through
 * its server) with `acl { enabled = true }`, bootstrapped and configured with the CLI. The
 * anonymous token is refused registration, exec, logs and fs; a token with `read` on one
 * namespace lists its jobs but cannot register, exec, or read another namespace's jobs, events
 * or search results; an alloc-exec token execs; management does everything; a client presenting
 * another node's secret is refused; the sample policy is accepted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Node } from '../../src/structs/index.js';
import type { AclToken } from '../../src/structs/acl.js';
import { call, execOnce, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';
import { killDataDirProcesses } from './helpers/processes.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

const SAMPLE_POLICY = `
namespace "*" {
  policy       = "write"
  capabilities = ["alloc-node-exec", "read-job"]
}
agent {
  policy = "read"
}
operator {
  policy = "read"
}
quota {
  policy = "read"
}
node {
  policy = "read"
}
host_volume "*" {
  policy = "write"
}
plugin {
  policy = "read"
}
`;

const job = (id: string, namespace: string) => `
job "${id}" {
  datacenters = ["dc1"]
  namespace   = "${namespace}"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello-${id}; while true; do sleep 0.2; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`;

/** One exec over the websocket with a token: its stdout, or the close reason when refused. */
async function exec(address: string, allocId: string, token: string | undefined): Promise<{ stdout: string; closeReason: string }> {
  const r = await execOnce(address, allocId, ['/bin/echo', 'exec-ok'], token ? { 'X-Nomad-Token': token } : {});
  return { stdout: r.stdout, closeReason: r.reason };
}

/** The events a token reads from the stream from index 1 for `ms`. */
async function streamedEvents(address: string, token: string, ms: number): Promise<{ Topic: string; Namespace: string }[]> {
  const ac = new AbortController();
  const res = await fetch(`${address}/v1/event/stream?index=1&namespace=*`, { headers: { 'X-Nomad-Token': token }, signal: ac.signal });
  assert.equal(res.status, 200);
  const out: { Topic: string; Namespace: string }[] = [];
  const timer = setTimeout(() => ac.abort(), ms);
  const frames = new JsonFrameDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (const frame of frames.pushParsed<{ Events?: { Topic: string; Namespace: string }[] }>(Buffer.from(chunk).toString('utf8'))) {
        out.push(...(frame.Events ?? []));
      }
    }
  } catch {
    // aborted: done reading
  } finally {
    clearTimeout(timer);
  }
  return out;
}

test('ACLs enforced through a server and a client-only agent', async () => {
  const tmp = await mkdtemp('/tmp/cv-acl-');
  let server: AgentProcess | undefined;
  let client: AgentProcess | undefined;
  try {
    const aclConfig = join(tmp, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled   = true\n  token_ttl = "1s"\n}\n');
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), extraArgs: ['-config', aclConfig] });
    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c'), extraArgs: ['-config', aclConfig] });
    const s = server.address;

    // Bootstrap and policies through the CLI.
    const boot = await runCli(s, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    const mgmt = JSON.parse(boot.stdout) as AclToken;
    const again = await runCli(s, ['acl', 'bootstrap']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /ACL bootstrap already done \(reset index: \d+\)/);
    const cli = (args: string[]) => runCli(s, [...args, '-token', mgmt.SecretID]);
    for (const [name, rules] of [
      ['sample', SAMPLE_POLICY],
      ['read-default', 'namespace "default" { policy = "read" }'],
      ['exec-default', 'namespace "default" { capabilities = ["alloc-exec", "alloc-node-exec", "read-job"] }'],
      ['isolated-exec', 'namespace "default" { capabilities = ["alloc-exec", "read-job"] }'],
    ] as const) {
      const file = join(tmp, `${name}.hcl`);
      await writeFile(file, rules);
      const applied = await cli(['acl', 'policy', 'apply', name, file]);
      assert.equal(applied.code, 0, applied.stderr);
      assert.match(applied.stdout, new RegExp(`Successfully wrote "${name}" ACL policy!`));
    }
    const badFile = join(tmp, 'bad.hcl');
    await writeFile(badFile, 'namespace "default" {\n  policy = "read"\n  capabilities = ["read-everything"]\n}\n');
    const bad = await cli(['acl', 'policy', 'apply', 'bad', badFile]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown capability "read-everything" \(line 3\)/);
    const listed = await cli(['acl', 'policy', 'list']);
    assert.match(listed.stdout, /exec-default[\s\S]*read-default[\s\S]*sample/);
    const token = async (policy: string) => {
      const r = await cli(['acl', 'token', 'create', '-name', policy, '-policy', policy, '-json']);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as AclToken;
    };
    const reader = await token('read-default');
    const execer = await token('exec-default');
    const isolatedOnly = await token('isolated-exec');
    const self = await runCli(s, ['acl', 'token', 'self', '-token', reader.SecretID]);
    assert.match(self.stdout, /Policies\s+= read-default/);

    // Jobs in two namespaces, placed on the client.
    assert.equal((await call(s, 'PUT', '/v1/namespace/other', mgmt.SecretID, { Name: 'other' })).status, 200);
    const node = await waitFor('the client node ready', async () => (await call<Node[]>(s, 'GET', '/v1/nodes', mgmt.SecretID)).body.find?.((n) => n.Status === 'ready'));
    for (const [id, ns] of [['web', 'default'], ['hidden', 'other']] as const) {
      const file = join(tmp, `${id}.hcl`);
      await writeFile(file, job(id, ns));
      const run = await cli(['job', 'run', '-detach', file]);
      assert.equal(run.code, 0, run.stderr);
    }
    const running = async (id: string, ns: string) =>
      waitFor(`${id} running`, async () => (await call<AllocListStub[]>(s, 'GET', `/v1/job/${id}/allocations?namespace=${ns}`, mgmt.SecretID)).body.find?.((a) => a.ClientStatus === 'running'), 30_000);
    const web = await running('web', 'default');
    const hidden = await running('hidden', 'other');

    // Anonymous: no registration, exec, logs or fs.
    assert.equal((await call(s, 'PUT', '/v1/jobs', undefined, { Job: { ID: 'x' } })).status, 403);
    assert.match((await exec(s, web.ID, undefined)).closeReason, /Permission denied/);
    const anonLogs = await call(s, 'GET', `/v1/client/fs/logs/${web.ID}?task=t&type=stdout&plain=true`);
    assert.equal(anonLogs.status, 403);
    assert.equal(anonLogs.text, 'Permission denied');
    assert.equal((await call(s, 'GET', `/v1/client/fs/ls/${web.ID}?path=/`)).status, 403);
    assert.equal((await call(client.address, 'GET', `/v1/client/fs/ls/${web.ID}?path=/`)).status, 403, 'the client agent refuses too');

    // A read token on "default": lists its jobs, nothing more.
    const jobs = await call<{ ID: string }[]>(s, 'GET', '/v1/jobs?namespace=*', reader.SecretID);
    assert.deepEqual(jobs.body.map((j) => j.ID), ['web']);
    assert.equal((await call(s, 'GET', '/v1/job/hidden?namespace=other', reader.SecretID)).status, 403);
    assert.equal((await call(s, 'PUT', '/v1/jobs', reader.SecretID, { Job: { ID: 'x' } })).status, 403);
    assert.match((await exec(s, web.ID, reader.SecretID)).closeReason, /Permission denied/);
    assert.equal((await call(s, 'GET', `/v1/client/fs/logs/${web.ID}?task=t&type=stdout&plain=true`, reader.SecretID)).status, 403);
    const search = await call<{ Matches: Record<string, string[]> }>(s, 'POST', '/v1/search?namespace=*', reader.SecretID, { Prefix: '', Context: 'all' });
    assert.ok(!search.body.Matches['jobs']?.includes('hidden'), 'search hides the other namespace');
    assert.ok(!search.body.Matches['allocs']?.includes(hidden.ID));
    assert.ok(search.body.Matches['jobs']?.includes('web'));
    const events = await streamedEvents(s, reader.SecretID, 1500);
    assert.ok(events.some((e) => e.Namespace === 'default'), 'the reader sees its namespace\'s events');
    assert.ok(events.every((e) => e.Namespace !== 'other' && e.Topic !== 'Node'), 'and nothing of another namespace, nor nodes');

    // An alloc-exec token execs, through the server (forwarded to the client, which checks again) and on the client.
    assert.match((await exec(s, web.ID, execer.SecretID)).stdout, /exec-ok/);
    assert.match((await exec(client.address, web.ID, execer.SecretID)).stdout, /exec-ok/);
    assert.match((await exec(s, hidden.ID, execer.SecretID)).closeReason, /Permission denied/);
    // raw_exec runs on the host unisolated: alloc-exec alone is not enough (Nomad's alloc-node-exec), here or on the client.
    // The refusal names the capability that is missing, so the user knows what to ask for.
    const nodeExec = /^Permission denied: the token lacks the "alloc-node-exec" capability in namespace "default"$/;
    assert.match((await exec(s, web.ID, isolatedOnly.SecretID)).closeReason, nodeExec);
    assert.match((await exec(client.address, web.ID, isolatedOnly.SecretID)).closeReason, nodeExec);

    // Management: everything.
    assert.match((await exec(s, hidden.ID, mgmt.SecretID)).stdout, /exec-ok/);
    const logs = await call(s, 'GET', `/v1/client/fs/logs/${hidden.ID}?task=t&type=stdout&plain=true&follow=false`, mgmt.SecretID);
    assert.equal(logs.status, 200, logs.text);
    assert.match(logs.text, /hello-hidden/);
    const mgmtEvents = await streamedEvents(s, mgmt.SecretID, 1000);
    assert.ok(mgmtEvents.some((e) => e.Namespace === 'other'));

    // Node secrets: no answer carries one, and another node's secret is refused.
    const read = await call<Node>(s, 'GET', `/v1/node/${node.ID}`, mgmt.SecretID);
    assert.equal(read.body.SecretID, '');
    const impostor = { ...read.body, ID: '11111111-2222-3333-4444-555555555555', Name: 'impostor', SecretID: '99999999-8888-7777-6666-555555555555' };
    assert.equal((await call(s, 'PUT', '/v1/internal/node/register', impostor.SecretID, { Node: impostor })).status, 200);
    const forged = await call(s, 'PUT', `/v1/internal/node/${node.ID}/heartbeat`, impostor.SecretID, { Status: 'down' });
    assert.equal(forged.status, 403);
    const forgedUpdate = await call(s, 'PUT', '/v1/internal/allocs/update', impostor.SecretID, { Allocs: [{ ID: web.ID, NodeID: node.ID, ClientStatus: 'failed', TaskStates: {} }] });
    assert.equal(forgedUpdate.status, 403);
    assert.equal((await call(s, 'GET', `/v1/node/${node.ID}/allocations`, impostor.SecretID)).status, 403);
    assert.equal((await call<Node>(s, 'GET', `/v1/node/${node.ID}`, mgmt.SecretID)).body.Status, 'ready');
  } finally {
    await client?.stop();
    await server?.stop();
    for (const dir of [join(tmp, 'c'), join(tmp, 's')]) await killDataDirProcesses(dir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});
