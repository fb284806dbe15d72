/**
 * Native service checks through a real agent: the client runs a task service's tcp and http
 * checks, answers their results at /v1/client/allocation/:id/checks and in `caravan alloc
 * checks`, and a failing http check with check_restart restarts the task after `limit`
 * failures past its `grace`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import type { AllocListStub, Allocation } from '../../src/structs/index.js';
import type { CheckQueryResult } from '../../src/client/serviceregistration/alloc-check-runner.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

const SERVER = "require('http').createServer((q, s) => { s.statusCode = q.url === '/health' ? 500 : 200; s.end(q.url === '/health' ? 'sick' : 'ok'); }).listen(+process.env.NOMAD_PORT_http, process.env.NOMAD_IP_http)";

const JOB = `
job "ck" {
  datacenters = ["dc1"]
  group "g" {
    network {
      port "http" {}
    }
    restart {
      attempts = 5
      interval = "10m"
      delay    = "1s"
      mode     = "fail"
    }
    task "web" {
      driver = "raw_exec"
      config {
        command = "${process.execPath}"
        args    = ["-e", ${JSON.stringify(SERVER)}]
      }
      service {
        name     = "ck-web"
        provider = "nomad"
        port     = "http"
        check {
          name     = "alive"
          type     = "tcp"
          interval = "1s"
          timeout  = "1s"
        }
        check {
          name     = "health"
          type     = "http"
          path     = "/health"
          method   = "GET"
          interval = "1s"
          timeout  = "1s"
          header {
            X-Probe = ["caravan"]
          }
          check_restart {
            limit = 2
            grace = "1s"
          }
        }
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`;

test('the client runs http and tcp checks, reports them, and check_restart restarts a task whose check fails', async () => {
  const dataDir = await mkdtemp('/tmp/cck-');
  const agent = await startAgent({ roleArgs: ['-dev'], dataDir, readyTimeoutMs: 60_000 });
  const a = agent.address;
  try {
    const parsed = await api(a, 'POST', '/v1/jobs/parse', { JobHCL: JOB, Canonicalize: true });
    assert.equal(parsed.status, 200, parsed.text);
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    const stub = await waitUntil('an alloc of ck', async () => (await api<AllocListStub[]>(a, 'GET', '/v1/job/ck/allocations')).body[0], 30_000);

    const results = await waitUntil(
      'both check results',
      async () => {
        const r = (await api<Record<string, CheckQueryResult>>(a, 'GET', `/v1/client/allocation/${stub.ID}/checks`)).body;
        const list = Object.values(r);
        return list.some((c) => c.Check === 'alive' && c.Status === 'success') && list.some((c) => c.Check === 'health' && c.Status === 'failure' && c.StatusCode === 500) ? list : undefined;
      },
      30_000,
    );
    const health = results.find((c) => c.Check === 'health')!;
    assert.equal(health.StatusCode, 500);
    assert.equal(health.Output, 'sick');
    assert.equal(health.Service, 'ck-web');
    assert.equal(health.Task, 'web');
    assert.equal(health.Mode, 'healthiness');

    // check_restart: two failures after the grace restart the task, counted by its restart policy.
    const restarted = await waitUntil(
      'the check_restart',
      async () => (await api<Allocation>(a, 'GET', `/v1/allocation/${stub.ID}`)).body.TaskStates?.['web']?.Events.find((e) => e.Type === 'Restart Signaled'),
      30_000,
    );
    assert.equal(restarted.RestartReason, 'healthcheck: check "health" unhealthy');

    const cli = await runCli(a, ['alloc', 'checks', stub.ID]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /Status of 2 Nomad Service Checks/);
    assert.match(cli.stdout, /Name\s+= health/);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
