/**
 * A client agent killed with SIGKILL cannot deregister its services: the server removes them
 * itself when it marks the node down (missed heartbeats), and publishes ServiceDeregistration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Node } from '../../src/structs/index.js';
import type { ServiceRegistration } from '../../src/structs/service-registration.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { killDataDirProcesses, runJob, waitFor } from './helpers/client-agent.js';
import { watchEvents } from './helpers/poseidon-client.js';

const JOB = `
job "nd" {
  datacenters = ["*"]
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "nd-api"
      provider = "nomad"
      port     = "http"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;

test('a node killed with -9 has its service registrations removed when the server marks it down', async () => {
  const tmp = await mkdtemp('/tmp/cv-nd-');
  const agents: AgentProcess[] = [];
  try {
    const server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), readyTimeoutMs: 60_000 });
    agents.push(server);
    const client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c'), readyTimeoutMs: 60_000 });
    agents.push(client);
    const s = server.address;
    await waitFor('the client node ready', async () => (await api<Node[]>(s, 'GET', '/v1/nodes')).body.find((n) => n.Status === 'ready'), 30_000);
    await runJob(s, tmp, 'nd', JOB);
    const reg = await waitFor('the registration', async () => (await api<ServiceRegistration[]>(s, 'GET', '/v1/service/nd-api')).body[0], 30_000);
    const events = await watchEvents(s, `topic=Service&index=${reg.ModifyIndex}`);
    try {
      await client.kill();
      await waitFor('the node down', async () => (await api<Node[]>(s, 'GET', '/v1/nodes')).body.find((n) => n.Status === 'down'), 90_000, 250);
      assert.deepEqual((await api<ServiceRegistration[]>(s, 'GET', '/v1/service/nd-api')).body, []);
      assert.deepEqual((await api(s, 'GET', '/v1/services')).body, []);
      const ev = await waitFor('the deregistration event', () => events.events.find((e) => e.Type === 'ServiceDeregistration'), 10_000);
      assert.equal(ev.Topic, 'Service');
      assert.equal((ev.Payload as { Service: ServiceRegistration }).Service.ID, reg.ID);
    } finally {
      events.close();
    }
  } finally {
    for (const a of [...agents].reverse()) await a.stop().catch(() => undefined);
    for (const a of agents) await killDataDirProcesses(a.dataDir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});
