/**
 * Workload identity end to end on a -dev agent with ACLs on: the task gets its identity as
 * NOMAD_TOKEN and secrets/nomad_token, calls the API with it and reads its own job's variable,
 * is refused another job's and a path outside its implicit policy until a policy is attached to
 * its job (`acl policy apply -job`); after `operator root keyring rotate` the identity issued
 * before still verifies (its key is inactive, not gone), and once that key is removed it does not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub } from '../../src/structs/index.js';
import type { RootKeyMeta } from '../../src/structs/root-key.js';
import { call, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

// The task's check, run by node: no `${` (HCL would interpolate it) and no `{{` (a template).
const CHECK = `
const fs = require('fs');
const addr = process.env.ADDR;
const envToken = process.env.NOMAD_TOKEN || '';
const fileToken = fs.readFileSync('secrets/nomad_token', 'utf8');
const get = async (path, token) => {
  const r = await fetch(addr + path, { headers: { 'X-Nomad-Token': token } });
  const body = r.status === 200 ? JSON.stringify((await r.json()).Items) : '';
  return r.status + ' ' + body;
};
(async () => {
  console.log('own=' + (await get('/v1/var/nomad/jobs/wi', envToken)));
  console.log('other=' + (await get('/v1/var/nomad/jobs/other', fileToken)));
  console.log('shared=' + (await get('/v1/var/shared/db', fileToken)));
  console.log('same=' + (envToken === fileToken && envToken !== ''));
  console.log('token=' + fileToken);
  console.log('done');
  setInterval(() => undefined, 1 << 30);
})();
`;

const job = (addr: string): string => `
job "wi" {
  datacenters = ["*"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "${process.execPath}"
        args    = ["local/check.js"]
      }
      env {
        ADDR = "${addr}"
      }
      identity {
        env  = true
        file = true
        ttl  = "1h"
      }
      template {
        data        = <<EOT
${CHECK}
EOT
        destination = "local/check.js"
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}`;

test('a task calls the API with its workload identity: its own variable yes, others no; a rotated key still verifies it', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-wi-'));
  let agent: AgentProcess | undefined;
  try {
    const aclConfig = join(tmp, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled = true\n}\n');
    agent = await startAgent({ roleArgs: ['-dev'], dataDir: join(tmp, 'a'), extraArgs: ['-config', aclConfig], readyTimeoutMs: 60_000 });
    const a = agent.address;
    const boot = await runCli(a, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    const mgmt = (JSON.parse(boot.stdout) as AclToken).SecretID;
    const cli = (args: string[]) => runCli(a, args, { env: { CARAVAN_TOKEN: mgmt } });

    // The leader made the first key on taking office: one active RS256 key, published.
    const keys = await waitUntil('the first root key', async () => {
      const r = await call<RootKeyMeta[]>(a, 'GET', '/v1/operator/keyring/keys', mgmt);
      return r.status === 200 && r.body.length > 0 ? r.body : undefined;
    });
    assert.deepEqual(keys.map((k) => [k.State, k.Algorithm]), [['active', 'RS256']]);
    const firstKey = keys[0]!.KeyID;

    for (const [path, items] of [
      ['nomad/jobs/wi', { k: 'mine' }],
      ['nomad/jobs/other', { k: 'theirs' }],
      ['shared/db', { pass: 's3cret' }],
    ] as const) {
      assert.equal((await call(a, 'PUT', `/v1/var/${path}`, mgmt, { Items: items })).status, 200);
    }
    const file = join(tmp, 'wi.hcl');
    await writeFile(file, job(a));
    const run = await cli(['job', 'run', '-detach', file]);
    assert.equal(run.code, 0, run.stderr);

    const alloc = await waitUntil('the task running', async () => (await call<AllocListStub[]>(a, 'GET', '/v1/job/wi/allocations', mgmt)).body.find?.((x) => x.ClientStatus === 'running'), 60_000);
    const out = await waitUntil(
      'the task\'s checks',
      async () => {
        const r = await call(a, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent('alloc/logs/t.stdout.0')}`, mgmt);
        return r.status === 200 && r.text.includes('done') ? r.text : undefined;
      },
      30_000,
    );
    const line = (k: string): string => out.split('\n').find((l) => l.startsWith(`${k}=`))?.slice(k.length + 1) ?? '';
    assert.equal(line('own'), '200 {"k":"mine"}');
    assert.equal(line('other'), '403 ');
    assert.equal(line('shared'), '403 ');
    assert.equal(line('same'), 'true');
    const identity = line('token');
    assert.match(identity, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const claims = JSON.parse(Buffer.from(identity.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.equal(claims['nomad_namespace'], 'default');
    assert.equal(claims['nomad_job_id'], 'wi');
    assert.equal(claims['nomad_allocation_id'], alloc.ID);
    assert.equal(claims['nomad_task'], 't');
    assert.equal(claims['sub'], 'global:default:wi:g:t:default');
    assert.equal(claims['aud'], 'nomadproject.io');
    assert.equal(Number(claims['exp']) - Number(claims['iat']), 3600);

    // A policy attached to the job grants the identity what its implicit policy does not.
    const rules = join(tmp, 'shared.hcl');
    await writeFile(rules, 'namespace "default" {\n  variables {\n    path "shared/*" {\n      capabilities = ["read"]\n    }\n  }\n}\n');
    const apply = await cli(['acl', 'policy', 'apply', '-job', 'wi', 'shared-read', rules]);
    assert.equal(apply.code, 0, apply.stderr);
    assert.equal((await call(a, 'GET', '/v1/var/shared/db', identity)).status, 200);
    // Still nothing beyond: writes, other jobs' variables, management routes.
    assert.equal((await call(a, 'PUT', '/v1/var/nomad/jobs/wi', identity, { Items: { k: 'x' } })).status, 403);
    assert.equal((await call(a, 'GET', '/v1/var/nomad/jobs/other', identity)).status, 403);
    assert.equal((await call(a, 'GET', '/v1/operator/keyring/keys', identity)).status, 403);

    // Rotation: a new active key; the identity issued before still verifies with the old one.
    const rotate = await cli(['operator', 'root', 'keyring', 'rotate', '-json']);
    assert.equal(rotate.code, 0, rotate.stderr);
    const after = (await call<RootKeyMeta[]>(a, 'GET', '/v1/operator/keyring/keys', mgmt)).body;
    assert.equal(after.length, 2);
    assert.equal(after.find((k) => k.KeyID === firstKey)?.State, 'inactive');
    const jwks = await call<{ keys: { kid: string }[] }>(a, 'GET', '/.well-known/jwks.json');
    assert.deepEqual(jwks.body.keys.map((k) => k.kid).sort(), after.map((k) => k.KeyID).sort());
    assert.equal((await call(a, 'GET', '/v1/var/nomad/jobs/wi', identity)).status, 200);

    // The active key cannot be removed; the old one can, and then its identities no longer verify.
    const active = after.find((k) => k.State === 'active')!.KeyID;
    const refuse = await cli(['operator', 'root', 'keyring', 'remove', active]);
    assert.notEqual(refuse.code, 0);
    assert.match(refuse.stderr, /active root key/);
    const remove = await cli(['operator', 'root', 'keyring', 'remove', firstKey]);
    assert.equal(remove.code, 0, remove.stderr);
    assert.equal((await call(a, 'GET', '/v1/var/nomad/jobs/wi', identity)).status, 403);

    // Stopping the job ends what its identities may do, even before they expire.
    await cli(['job', 'stop', 'wi']);
  } finally {
    await agent?.stop();
    await rm(tmp, { recursive: true, force: true });
  }
});
