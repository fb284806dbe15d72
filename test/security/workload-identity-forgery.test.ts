/**
 * Attacks on workload identities, on a -dev agent with ACLs on. A job in namespace "default"
 * runs a task that prints its identities (the default one, a short-lived one, and one made for
 * a third party). The attacker holds those tokens and tries: `alg: none`; HS256 signed with the
 * cluster's public key; a token of its own RSA key with an unknown kid and with the cluster's
 * kid; claims edited to another namespace or job; an expired identity; the third party's token
 * replayed against Nomad's API; its own identity against another namespace's and another job's
 * variables; the internal signing route without the node's secret; template reads with a
 * forged, mismatched or third-party identity; the identity of a stopped allocation. Every one is refused (403), and neither the JWKS nor the keyring list carries any
 * private key material.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub } from '../../src/structs/index.js';
import { call, runCli, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { waitUntil } from '../integration/helpers/poseidon-client.js';

const SCRIPT = 'echo "default=$(cat secrets/nomad_token)"; echo "short=$(cat secrets/nomad_short.jwt)"; echo "vault=$(cat secrets/nomad_vault.jwt)"; echo done; sleep 600';

const job = `
job "wi" {
  datacenters = ["*"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SCRIPT)}]
      }
      identity {
        file = true
      }
      identity {
        name = "short"
        aud  = ["nomadproject.io"]
        file = true
        ttl  = "2s"
      }
      identity {
        name = "vault"
        aud  = ["vault.io"]
        file = true
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
const part = (jwt: string, i: 0 | 1): Record<string, unknown> => JSON.parse(Buffer.from(jwt.split('.')[i]!, 'base64url').toString()) as Record<string, unknown>;

describe('workload identity forgery', () => {
  let tmp = '';
  let agent: AgentProcess | undefined;
  let a = '';
  let mgmt = '';
  let alloc = '';
  const tokens: Record<string, string> = {};
  const own = '/v1/var/nomad/jobs/wi';

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'caravan-sec-wi-'));
    const aclConfig = join(tmp, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled = true\n}\n');
    agent = await startAgent({ roleArgs: ['-dev'], dataDir: join(tmp, 'a'), extraArgs: ['-config', aclConfig], readyTimeoutMs: 60_000 });
    a = agent.address;
    const boot = await runCli(a, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    mgmt = (JSON.parse(boot.stdout) as AclToken).SecretID;
    assert.equal((await call(a, 'PUT', '/v1/namespace/other', mgmt, { Name: 'other' })).status, 200);
    for (const [path, ns] of [['nomad/jobs/wi', 'default'], ['nomad/jobs/victim', 'default'], ['nomad/jobs/wi', 'other']] as const) {
      const r = await call(a, 'PUT', `/v1/var/${path}?namespace=${ns}`, mgmt, { Namespace: ns, Items: { secret: `${ns}-${path}` } });
      assert.equal(r.status, 200, r.text);
    }
    const file = join(tmp, 'wi.hcl');
    await writeFile(file, job);
    const run = await runCli(a, ['job', 'run', '-detach', file], { env: { CARAVAN_TOKEN: mgmt } });
    assert.equal(run.code, 0, run.stderr);
    alloc = (await waitUntil('the task running', async () => (await call<AllocListStub[]>(a, 'GET', '/v1/job/wi/allocations', mgmt)).body.find?.((x) => x.ClientStatus === 'running'), 60_000)).ID;
    const out = await waitUntil(
      'the task printing its identities',
      async () => {
        const r = await call(a, 'GET', `/v1/client/fs/cat/${alloc}?path=${encodeURIComponent('alloc/logs/t.stdout.0')}`, mgmt);
        return r.status === 200 && r.text.includes('done') ? r.text : undefined;
      },
      30_000,
    );
    for (const l of out.split('\n')) {
      const m = /^(\w+)=(.+)$/.exec(l);
      if (m) tokens[m[1]!] = m[2]!;
    }
    // The genuine identity works: every refusal below is the forgery's, not a broken setup.
    const ok = await call(a, 'GET', own, tokens['default']);
    assert.equal(ok.status, 200, ok.text);
  });

  after(async () => {
    await agent?.stop();
    await rm(tmp, { recursive: true, force: true });
  });

  const refused = async (token: string, path = own): Promise<void> => {
    const r = await call(a, 'GET', path, token);
    assert.equal(r.status, 403, `${path}: ${r.status} ${r.text}`);
    assert.doesNotMatch(r.text, /default-nomad|other-nomad/);
  };

  it('refuses alg none, with and without a signature', async () => {
    const [, claims] = tokens['default']!.split('.');
    const header = b64({ ...part(tokens['default']!, 0), alg: 'none' });
    await refused(`${header}.${claims}.`);
    await refused(`${header}.${claims}.AAAA`);
  });

  it('refuses HS256 signed with the cluster\'s public key', async () => {
    const jwks = await call<{ keys: Record<string, string>[] }>(a, 'GET', '/.well-known/jwks.json');
    const jwk = jwks.body.keys[0]!;
    const pem = createPublicKey({ key: jwk as unknown as import('node:crypto').JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
    const [, claims] = tokens['default']!.split('.');
    for (const secret of [pem, JSON.stringify(jwk), jwk['n']!]) {
      const input = `${b64({ alg: 'HS256', kid: jwk['kid'], typ: 'JWT' })}.${claims}`;
      await refused(`${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`);
    }
  });

  it('refuses a token of another RSA key, under an unknown kid and under the cluster\'s kid', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const claims = b64(part(tokens['default']!, 1));
    for (const kid of ['attacker-key', part(tokens['default']!, 0)['kid']]) {
      const input = `${b64({ alg: 'RS256', kid, typ: 'JWT' })}.${claims}`;
      await refused(`${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`);
    }
  });

  it('refuses genuine signatures over edited claims (another namespace, another job, no expiry)', async () => {
    const [h, , s] = tokens['short']!.split('.');
    const claims = part(tokens['short']!, 1);
    for (const edit of [{ nomad_namespace: 'other' }, { nomad_job_id: 'victim' }, { exp: 4102444800 }]) {
      await refused(`${h}.${b64({ ...claims, ...edit })}.${s}`, '/v1/var/nomad/jobs/wi?namespace=other');
      await refused(`${h}.${b64({ ...claims, ...edit })}.${s}`, '/v1/var/nomad/jobs/victim');
    }
  });

  it('refuses its own identity against another namespace\'s and another job\'s variables', async () => {
    await refused(tokens['default']!, '/v1/var/nomad/jobs/wi?namespace=other');
    await refused(tokens['default']!, '/v1/var/nomad/jobs/victim');
    const list = await call<{ Path: string; Namespace: string }[]>(a, 'GET', '/v1/vars?namespace=*', tokens['default']);
    if (list.status === 200) assert.deepEqual(list.body.map((v) => `${v.Namespace}/${v.Path}`), ['default/nomad/jobs/wi']);
    else assert.equal(list.status, 403);
  });

  it('refuses a token made for a third party (aud vault.io) replayed against the API', async () => {
    assert.equal(part(tokens['vault']!, 1)['aud'], 'vault.io');
    await refused(tokens['vault']!);
  });

  it('refuses an expired identity', async () => {
    const exp = Number(part(tokens['short']!, 1)['exp']);
    await waitUntil('the short identity expired', () => Date.now() / 1000 > exp + 1, 10_000);
    await refused(tokens['short']!);
  });

  it('refuses the internal signing route without the node\'s secret', async () => {
    for (const token of [undefined, tokens['default'], mgmt]) {
      const r = await call(a, 'PUT', '/v1/internal/task/identities', token, { AllocID: alloc, Task: 't', Identities: [] });
      assert.equal(r.status, 403, r.text);
      assert.doesNotMatch(r.text, /eyJ/);
    }
  });

  it('template reads under an identity get that workload\'s grant only; a forged or mismatched identity is refused', async () => {
    const read = (identity: string, allocId: string, path: string) =>
      call<{ Results: { Error?: string; Variable?: { Items: Record<string, string> } | null }[] }>(a, 'PUT', '/v1/internal/task/variables', undefined, {
        AllocID: allocId,
        Task: 't',
        Identity: identity,
        Reads: [{ Op: 'get', Path: path }],
      });
    const mine = await read(tokens['default']!, alloc, 'nomad/jobs/wi');
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual(mine.body.Results[0]?.Variable?.Items, { secret: 'default-nomad/jobs/wi' });
    const theirs = await read(tokens['default']!, alloc, 'nomad/jobs/victim');
    assert.deepEqual(theirs.body.Results, [{ Error: 'Permission denied' }]);
    const [h, p] = tokens['default']!.split('.');
    for (const [identity, allocId] of [[`${h}.${p}.AAAA`, alloc], [tokens['default']!, '00000000-0000-0000-0000-000000000000'], [tokens['vault']!, alloc]] as const) {
      const r = await read(identity, allocId, 'nomad/jobs/wi');
      assert.equal(r.status, 403, r.text);
      assert.doesNotMatch(r.text, /default-nomad/);
    }
  });

  it('publishes no private key material in the JWKS or the keyring list', async () => {
    const jwks = await call<{ keys: Record<string, unknown>[] }>(a, 'GET', '/.well-known/jwks.json');
    assert.ok(jwks.body.keys.length >= 1);
    for (const k of jwks.body.keys) assert.deepEqual(Object.keys(k).sort(), ['alg', 'e', 'kid', 'kty', 'n', 'use']);
    const list = await call<Record<string, unknown>[]>(a, 'GET', '/v1/operator/keyring/keys', mgmt);
    for (const k of list.body) assert.deepEqual(Object.keys(k).sort(), ['Algorithm', 'CreateIndex', 'CreateTime', 'KeyID', 'ModifyIndex', 'PublishTime', 'State']);
    const rotate = await call(a, 'PUT', '/v1/operator/keyring/rotate', mgmt);
    for (const text of [jwks.text, list.text, rotate.text]) assert.doesNotMatch(text, /PRIVATE KEY|"d":|"p":|"q":/);
  });

  it('refuses the identity of a stopped allocation', async () => {
    assert.equal((await call(a, 'DELETE', '/v1/job/wi', mgmt)).status, 200);
    await waitUntil('the allocation stopped', async () => (await call<{ ClientStatus: string }>(a, 'GET', `/v1/allocation/${alloc}`, mgmt)).body.ClientStatus !== 'running', 30_000);
    await refused(tokens['default']!);
  });
});
