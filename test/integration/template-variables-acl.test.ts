/**
 * Template variables on a cluster of a server and a separate client agent with ACLs on: the
 * client reads variables on its internal route with its node's secret (no token of its own),
 * the task reads its job's own paths without any policy, a policy attached to the job with
 * `acl policy apply -job` grants it more, and a job without such a policy is refused that read.
 * The internal route itself refuses a caller without the node's secret.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub, Allocation } from '../../src/structs/index.js';
import { call, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

const job = (id: string) => `
job "${id}" {
  type        = "batch"
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/out.txt"]
      }
      template {
        data        = "own={{ with nomadVar \\"nomad/jobs/${id}\\" }}{{ .k }}{{ end }} shared={{ with nomadVar \\"shared/db\\" }}{{ .pass }}{{ end }}\\n"
        destination = "local/out.txt"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`;

test('template variables over the internal route with ACLs: implicit paths, a policy attached by JobACL, a refusal', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-tvacl-'));
  let server: AgentProcess | undefined;
  let client: AgentProcess | undefined;
  try {
    const aclConfig = join(tmp, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled = true\n}\n');
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), extraArgs: ['-config', aclConfig] });
    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c'), extraArgs: ['-config', aclConfig] });
    const s = server.address;
    const boot = await runCli(s, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    const mgmt = (JSON.parse(boot.stdout) as AclToken).SecretID;
    const cli = (args: string[]) => runCli(s, args, { env: { CARAVAN_TOKEN: mgmt } });

    // The internal route answers only the holder of the node's secret.
    const anon = await call(s, 'PUT', '/v1/internal/task/variables', undefined, { AllocID: 'x', Task: 't', Reads: [] });
    assert.equal(anon.status, 403, anon.text);

    for (const [path, items] of [
      ['nomad/jobs/tva', { k: 'a' }],
      ['nomad/jobs/tvb', { k: 'b' }],
      ['shared/db', { pass: 's3cret' }],
    ] as const) {
      assert.equal((await call(s, 'PUT', `/v1/var/${path}`, mgmt, { Items: items })).status, 200);
    }
    const rules = join(tmp, 'shared.hcl');
    await writeFile(rules, 'namespace "default" {\n  variables {\n    path "shared/*" {\n      capabilities = ["read"]\n    }\n  }\n}\n');
    const apply = await cli(['acl', 'policy', 'apply', '-job', 'tva', 'shared-read', rules]);
    assert.equal(apply.code, 0, apply.stderr);
    const pol = await call<{ JobACL: { JobID: string; Namespace: string } }>(s, 'GET', '/v1/acl/policy/shared-read', mgmt);
    assert.deepEqual([pol.body.JobACL.JobID, pol.body.JobACL.Namespace], ['tva', 'default']);

    await waitUntil('the client node ready', async () => (await call<{ Status: string }[]>(s, 'GET', '/v1/nodes', mgmt)).body.find?.((n) => n.Status === 'ready'), 30_000);
    for (const id of ['tva', 'tvb']) {
      const file = join(tmp, `${id}.hcl`);
      await writeFile(file, job(id));
      const run = await cli(['job', 'run', '-detach', file]);
      assert.equal(run.code, 0, run.stderr);
    }
    const terminal = (id: string) =>
      waitUntil(
        `${id} done`,
        async () => (await call<AllocListStub[]>(s, 'GET', `/v1/job/${id}/allocations`, mgmt)).body.find?.((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'),
        60_000,
      );
    const a = await terminal('tva');
    assert.equal(a.ClientStatus, 'complete');
    const logs = await call(s, 'GET', `/v1/client/fs/cat/${a.ID}?path=${encodeURIComponent('alloc/logs/t.stdout.0')}`, mgmt);
    assert.equal(logs.text, 'own=a shared=s3cret\n');

    const b = await terminal('tvb');
    assert.equal(b.ClientStatus, 'failed');
    const alloc = await call<Allocation>(s, 'GET', `/v1/allocation/${b.ID}`, mgmt);
    const failure = alloc.body.TaskStates?.['t']?.Events.find((e) => e.Type === 'Setup Failure');
    assert.equal(failure?.DisplayMessage, 'Template failed: nomad.var.get(shared/db@default.global): Permission denied');
  } finally {
    await client?.stop();
    await server?.stop();
    await rm(tmp, { recursive: true, force: true });
  }
});
