import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Node } from '../../src/structs/index.js';
import { api, freePort, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';
import { killDataDirProcesses } from './helpers/processes.js';

const JOB = `
job "fwd" {
  datacenters = ["dc1"]
  type = "service"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello-from-task; while true; do sleep 0.2; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

test('a client-only agent answers the whole API by forwarding server routes to its server', async () => {
  const tmp = await mkdtemp('/tmp/cv-fw-');
  let server: AgentProcess | undefined;
  let client: AgentProcess | undefined;
  try {
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's') });
    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c') });
    const c = client.address;
    const node = await waitFor('the client node registered and ready', async () => {
      const l = await api<Node[]>(c, 'GET', '/v1/nodes');
      return l.status === 200 ? l.body.find((n) => n.Status === 'ready') : undefined;
    });

    // Reads, with the server's query meta, through the client.
    const leader = await api<string>(c, 'GET', '/v1/status/leader');
    assert.equal(leader.status, 200, leader.text);
    // The leader is the server's real address (clients reach servers over HTTP), not a made-up RPC port.
    assert.equal(leader.body, `127.0.0.1:${server.port}`);
    const members = await api<{ Members: { Addr: string; Port: number; Tags: Record<string, string> }[] }>(server.address, 'GET', '/v1/agent/members');
    assert.equal(members.body.Members[0]!.Addr, '127.0.0.1');
    assert.equal(members.body.Members[0]!.Port, server.port);
    assert.equal(members.body.Members[0]!.Tags['port'], String(server.port));
    const self = await api<{ config: { Ports: { HTTP: number } } }>(server.address, 'GET', '/v1/agent/self');
    assert.equal(self.body.config.Ports.HTTP, server.port);

    // The node's SecretID never leaves the server, and only its holder may speak for the node.
    const one = await api<Node>(c, 'GET', `/v1/node/${node.ID}`);
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.SecretID, '');
    const forged = await api(server.address, 'PUT', `/v1/internal/node/${node.ID}/heartbeat`, { Status: 'down' });
    assert.equal(forged.status, 403, forged.text);
    assert.equal(forged.text, 'Permission denied');
    const wrongToken = await fetch(`${server.address}/v1/internal/node/${node.ID}/heartbeat`, {
      method: 'PUT',
      headers: { 'X-Nomad-Token': 'not-the-secret' },
      body: JSON.stringify({ Status: 'down' }),
    });
    assert.equal(wrongToken.status, 403);
    await wrongToken.text();
    assert.equal((await api<Node>(c, 'GET', `/v1/node/${node.ID}`)).body.Status, 'ready', 'the forged heartbeats changed nothing');
    const nodes = await fetch(`${c}/v1/nodes?prefix=${node.ID.slice(0, 4)}`);
    assert.equal(nodes.status, 200);
    assert.ok(Number(nodes.headers.get('x-nomad-index')) > 0, 'X-Nomad-Index passed through');
    await nodes.text();
    // A 404 of the server stays a 404.
    const missing = await api(c, 'GET', '/v1/job/nope');
    assert.equal(missing.status, 404, missing.text);

    // A blocking query through the client returns once the index moves past the one asked.
    const jobsBefore = await fetch(`${c}/v1/jobs`);
    const idx = Number(jobsBefore.headers.get('x-nomad-index'));
    await jobsBefore.text();
    const blocked = fetch(`${c}/v1/jobs?index=${idx}&wait=30s`);

    // The event stream through the client.
    const events = new AbortController();
    const stream = await fetch(`${c}/v1/event/stream?topic=Job`, { signal: events.signal });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    let seen = '';
    const sawJob = (async () => {
      const dec = new TextDecoder();
      while (!seen.includes('"fwd"')) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += dec.decode(value);
      }
    })();

    // `job run` against the CLIENT's address places the job on the client node.
    const file = join(tmp, 'fwd.hcl');
    await writeFile(file, JOB);
    const run = await runCli(c, ['job', 'run', file]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    const after = await blocked;
    assert.ok(Number(after.headers.get('x-nomad-index')) > idx, 'blocking query woke on the new job');
    assert.match(await after.text(), /"fwd"/);
    await sawJob;
    events.abort();
    assert.match(seen, /JobRegistered/);

    const alloc = await waitFor('a running alloc on the client node', async () => {
      const l = await api<AllocListStub[]>(c, 'GET', '/v1/job/fwd/allocations');
      return l.body.find((a) => a.ClientStatus === 'running');
    });
    assert.equal(alloc.NodeID, node.ID);

    for (const addr of [c, server.address]) {
      const status = await runCli(addr, ['job', 'status', 'fwd']);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /running/);
      const exec = await runCli(addr, ['alloc', 'exec', '-task', 't', alloc.ID, '/bin/echo', 'exec-ok']);
      assert.equal(exec.code, 0, `${addr}: ${exec.stdout}\n${exec.stderr}`);
      assert.match(exec.stdout, /exec-ok/);
      const logs = await runCli(addr, ['alloc', 'logs', alloc.ID, 't']);
      assert.equal(logs.code, 0, `${addr}: ${logs.stderr}`);
      assert.match(logs.stdout, /hello-from-task/);
    }

    // With its server gone, the client says so clearly instead of hanging or crashing.
    await server.stop();
    server = undefined;
    const down = await api(c, 'GET', '/v1/jobs');
    assert.equal(down.status, 503, down.text);
    assert.match(down.text, /no server reachable/);
    assert.equal((await api(c, 'GET', '/v1/agent/health')).status, 200);
  } finally {
    await client?.stop();
    await server?.stop();
    await killDataDirProcesses(tmp);
    await rm(tmp, { recursive: true, force: true });
  }
});

test('a client-only agent fails over to the next configured server', async () => {
  const tmp = await mkdtemp('/tmp/cv-fo-');
  let server: AgentProcess | undefined;
  let client: AgentProcess | undefined;
  try {
    const dead = await freePort();
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's') });
    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${dead},127.0.0.1:${server.port}`], dataDir: join(tmp, 'c') });
    const res = await api<string>(client.address, 'GET', '/v1/status/leader');
    assert.equal(res.status, 200, res.text);
    const put = await api(client.address, 'PUT', '/v1/jobs', { Job: { ID: 'fo', Type: 'batch', Datacenters: ['dc1'], TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' } }] }] } });
    assert.equal(put.status, 200, put.text);
  } finally {
    await client?.stop();
    await server?.stop();
    await killDataDirProcesses(tmp);
    await rm(tmp, { recursive: true, force: true });
  }
});
