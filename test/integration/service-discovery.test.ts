/**
 * Native service discovery through real agents: a job's `provider = "nomad"` group service is
 * registered when its task runs (address and port of the group's port, interpolated tags), a
 * second task finds it through a `nomadService` template and talks to it over loopback; the
 * catalogue answers /v1/services, /v1/service/:name (tag, choose, blocking), the job's and the
 * allocation's services, the `Service` event topic; stopping the job removes the registration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import type { AllocListStub } from '../../src/structs/index.js';
import type { ServiceRegistration, ServiceRegistrationListStub } from '../../src/structs/service-registration.js';
import { api, startAgent } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

const NODE = process.execPath;

const SERVER = "require('http').createServer((q, s) => s.end('hello from ' + process.env.NOMAD_ALLOC_ID)).listen(+process.env.NOMAD_PORT_http, process.env.NOMAD_IP_http)";
// Reads the address the template rendered, asks the server, writes its answer; again on change.
const CLIENT = [
  "const fs = require('fs');",
  'const go = async () => {',
  "  const up = fs.readFileSync('local/upstream.txt', 'utf8').trim();",
  "  if (up) { try { const r = await fetch('http://' + up + '/'); fs.writeFileSync('local/answer.txt', await r.text()); } catch {} }",
  '  setTimeout(go, 100);',
  '};',
  'go();',
].join(' ');

const JOB = `
job "sd" {
  datacenters = ["dc1"]
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "sd-web"
      provider = "nomad"
      port     = "http"
      tags     = ["v1", "alloc-\${NOMAD_ALLOC_INDEX}"]
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "${NODE}"
        args    = ["-e", ${JSON.stringify(SERVER)}]
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
    task "client" {
      driver = "raw_exec"
      template {
        data        = "{{ range nomadService \\"sd-web\\" }}{{ .Address }}:{{ .Port }}{{ end }}\\n"
        destination = "local/upstream.txt"
        change_mode = "noop"
      }
      config {
        command = "${NODE}"
        args    = ["-e", ${JSON.stringify(CLIENT)}]
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`;

async function register(address: string, hcl: string): Promise<void> {
  const parsed = await api(address, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
  assert.equal(parsed.status, 200, parsed.text);
  const reg = await api(address, 'PUT', '/v1/jobs', { Job: parsed.body });
  assert.equal(reg.status, 200, reg.text);
}

test('a task finds another through nomadService and talks to it; the catalogue answers as Nomad; a stop deregisters', async () => {
  const dataDir = await mkdtemp('/tmp/csd-');
  const agent = await startAgent({ roleArgs: ['-dev'], dataDir });
  const a = agent.address;
  try {
    const before = await api<ServiceRegistration[]>(a, 'GET', '/v1/service/sd-web');
    assert.equal(before.status, 200);
    assert.deepEqual(before.body, []);
    // A blocking query on the service, started before the job exists, is answered by its registration.
    const blocked = api<ServiceRegistration[]>(a, 'GET', `/v1/service/sd-web?index=${before.index}&wait=60s`);

    await register(a, JOB);
    const stub = await waitUntil('an alloc of sd', async () => (await api<AllocListStub[]>(a, 'GET', '/v1/job/sd/allocations')).body[0], 30_000);
    const woke = await blocked;
    assert.equal(woke.status, 200);
    assert.equal(woke.body.length, 1);
    assert.ok(woke.index > before.index);
    const reg = woke.body[0]!;
    assert.equal(reg.ServiceName, 'sd-web');
    assert.equal(reg.AllocID, stub.ID);
    assert.equal(reg.JobID, 'sd');
    assert.equal(reg.Namespace, 'default');
    assert.equal(reg.Datacenter, 'dc1');
    assert.equal(reg.ID, `_nomad-task-${stub.ID}-group-g-sd-web-http`);
    assert.deepEqual(reg.Tags, ['v1', 'alloc-0']);
    assert.ok(reg.Port > 0);

    // The client task rendered the server's address and got its answer over loopback.
    const cat = async (file: string): Promise<string | undefined> => {
      const r = await api(a, 'GET', `/v1/client/fs/cat/${stub.ID}?path=${encodeURIComponent(`client/local/${file}`)}`);
      return r.status === 200 ? r.text : undefined;
    };
    await waitUntil('the upstream address', async () => (await cat('upstream.txt'))?.trim() === `${reg.Address}:${reg.Port}`, 30_000);
    await waitUntil('the answer', async () => (await cat('answer.txt')) === `hello from ${stub.ID}`, 30_000);

    // The catalogue.
    const list = await api<ServiceRegistrationListStub[]>(a, 'GET', '/v1/services');
    assert.deepEqual(list.body, [{ Namespace: 'default', Services: [{ ServiceName: 'sd-web', Tags: ['alloc-0', 'v1'] }] }]);
    assert.deepEqual((await api<ServiceRegistrationListStub[]>(a, 'GET', '/v1/services?namespace=*')).body, list.body);
    assert.equal((await api<ServiceRegistration[]>(a, 'GET', '/v1/service/sd-web?tag=v1')).body.length, 1);
    assert.equal((await api<ServiceRegistration[]>(a, 'GET', '/v1/service/sd-web?tag=v2')).body.length, 0);
    assert.equal((await api<ServiceRegistration[]>(a, 'GET', '/v1/service/sd-web?choose=1|abc')).body.length, 1);
    assert.equal((await api<ServiceRegistration[]>(a, 'GET', `/v1/service/sd-web?filter=${encodeURIComponent('"v1" in Tags')}`)).body.length, 1);
    const badChoose = await api(a, 'GET', '/v1/service/sd-web?choose=x');
    assert.equal(badChoose.status, 400);
    assert.match(badChoose.text, /invalid format for choose parameter/);
    assert.deepEqual((await api<ServiceRegistration[]>(a, 'GET', '/v1/job/sd/services')).body.map((r) => r.ID), [reg.ID]);
    assert.deepEqual((await api<ServiceRegistration[]>(a, 'GET', `/v1/allocation/${stub.ID}/services`)).body.map((r) => r.ID), [reg.ID]);

    // A blocking query on another service is not answered by a change to this one.
    const other = await api(a, 'GET', '/v1/service/nothing-here');
    const otherBlocked = api(a, 'GET', `/v1/service/nothing-here?index=${other.index}&wait=3s`);

    // Stopping the job deregisters the instance; the blocked query on it wakes with the empty list.
    const now = await api<ServiceRegistration[]>(a, 'GET', '/v1/service/sd-web');
    const gone = api<ServiceRegistration[]>(a, 'GET', `/v1/service/sd-web?index=${now.index}&wait=60s`);
    assert.equal((await api(a, 'DELETE', '/v1/job/sd')).status, 200);
    const after = await gone;
    assert.deepEqual(after.body, []);
    const o = await otherBlocked;
    assert.equal(o.status, 200, o.text);
    assert.equal(o.index, other.index, 'a change to sd-web must not answer a query on another service');
    assert.deepEqual((await api(a, 'GET', '/v1/services')).body, []);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
