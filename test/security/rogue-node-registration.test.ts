/**
 * The attack of issue 26 item 4: someone who reaches the API port registers a node of their own
 * (a made-up ID and SecretID, no token), keeps it alive with heartbeats, is given another
 * namespace's allocations and reads their environment through GET /v1/node/<id>/allocations.
 *
 * - With ACLs on and `client_introduction { enforcement = "strict" }` the rogue gets nothing:
 *   every registration without a valid token is refused (none, a forged `alg: none` JWT, a JWT
 *   signed with another key), so it has no node to heartbeat or to read allocations as.
 * - With ACLs on and enforcement "none" (registration open, as before client introduction), the
 *   rogue still cannot take over a registered node: a registration naming its ID with another
 *   secret is refused and changes nothing, and the rogue's secret reads none of its allocations.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Allocation, Node, NodeListStub } from '../../src/structs/index.js';
import type { AclToken } from '../../src/structs/acl.js';
import { call, runCli, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { waitFor } from '../integration/helpers/client-agent.js';
import { killDataDirProcesses } from '../integration/helpers/processes.js';
import { mockNode } from '../mock/factories.js';

/** A job of namespace team-b whose task carries a secret in its environment. */
const secretJob = `
job "payments" {
  datacenters = ["*"]
  namespace   = "team-b"
  group "g" {
    count = 2
    task "t" {
      driver = "raw_exec"
      env {
        API_KEY = "sk-team-b-secret"
      }
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

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** Introduction claims a rogue would like to have, for any name and the default pool. */
function claims(name: string) {
  const now = Math.floor(Date.now() / 1000);
  return { aud: 'nomadproject.io', exp: now + 600, iat: now, nbf: now, jti: 'rogue', sub: `node-introduction:global:default:${name}:default`, nomad_node_pool: 'default', nomad_node_name: name };
}

async function startServer(tmp: string, name: string, enforcement: string): Promise<{ server: AgentProcess; mgmt: string }> {
  const cfg = join(tmp, `${name}.hcl`);
  await writeFile(cfg, `acl {\n  enabled = true\n}\nserver {\n  client_introduction {\n    enforcement = "${enforcement}"\n  }\n}\n`);
  const server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, name), extraArgs: ['-config', cfg] });
  const boot = await runCli(server.address, ['acl', 'bootstrap', '-json']);
  assert.equal(boot.code, 0, boot.stderr);
  return { server, mgmt: (JSON.parse(boot.stdout) as AclToken).SecretID };
}

async function submitSecretJob(tmp: string, address: string, mgmt: string): Promise<void> {
  assert.equal((await call(address, 'PUT', '/v1/namespace/team-b', mgmt, { Name: 'team-b' })).status, 200);
  const file = join(tmp, `payments-${randomBytes(3).toString('hex')}.hcl`);
  await writeFile(file, secretJob);
  const run = await runCli(address, ['job', 'run', '-detach', file, '-token', mgmt]);
  assert.equal(run.code, 0, run.stderr);
}

test('strict client introduction: a rogue node registers nothing and receives no allocation', async () => {
  const tmp = await mkdtemp('/tmp/cv-rogue-');
  const agents: AgentProcess[] = [];
  try {
    const { server, mgmt } = await startServer(tmp, 's', 'strict');
    agents.push(server);
    const s = server.address;
    await submitSecretJob(tmp, s, mgmt);

    // The rogue's attempts: no token, a JWT with alg none, a JWT signed with a key of its own.
    const rogue = mockNode({ Name: 'rogue' });
    const attempts: [string, string | undefined][] = [
      ['no token', undefined],
      ['its own SecretID as the token', rogue.SecretID],
      ['an unsigned JWT (alg none)', `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims('rogue'))}.`],
      ['a JWT signed with a key of its own', (() => {
        const h = `${b64({ alg: 'HS256', kid: 'rogue', typ: 'JWT' })}.${b64(claims('rogue'))}`;
        return `${h}.${createHmac('sha256', randomBytes(32)).update(h).digest('base64url')}`;
      })()],
    ];
    for (const [what, token] of attempts) {
      const r = await call(s, 'PUT', '/v1/internal/node/register', token, { Node: rogue });
      assert.equal(r.status, 403, `${what}: ${r.text}`);
      assert.match(r.text, /^Permission denied/, what);
    }
    assert.deepEqual((await call<NodeListStub[]>(s, 'GET', '/v1/nodes', mgmt)).body, [], 'no node was registered');

    // With no node it can neither heartbeat nor read allocations as one.
    const hb = await call(s, 'PUT', `/v1/internal/node/${rogue.ID}/heartbeat`, rogue.SecretID, { Status: 'ready' });
    assert.ok(hb.status === 403 || hb.status === 404, `heartbeat: ${hb.status} ${hb.text}`);
    const allocs = await call(s, 'GET', `/v1/node/${rogue.ID}/allocations`, rogue.SecretID);
    assert.equal(allocs.status, 403);
    assert.ok(!allocs.text.includes('sk-team-b-secret'));
    // The job's allocations stay unplaced: there is no node for them.
    const placed = (await call<AllocListStub[]>(s, 'GET', '/v1/job/payments/allocations?namespace=team-b', mgmt)).body;
    assert.deepEqual(placed, []);
    // And the rogue cannot mint itself a token: node:write is needed.
    const mint = await call(s, 'PUT', '/v1/acl/identity/client-introduction-token', undefined, { NodeName: 'rogue' });
    assert.equal(mint.status, 403);
  } finally {
    for (const a of agents) await a.stop().catch(() => undefined);
    for (const a of agents) await killDataDirProcesses(a.dataDir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});

test('enforcement none with ACLs: a rogue cannot take over a registered node or read its allocations', async () => {
  const tmp = await mkdtemp('/tmp/cv-rogue-');
  const agents: AgentProcess[] = [];
  try {
    const { server, mgmt } = await startServer(tmp, 's', 'none');
    agents.push(server);
    const s = server.address;
    // The victim node (its client's side played by this test), then the secret job placed on it.
    const victim = mockNode({ Name: 'victim' });
    assert.equal((await call(s, 'PUT', '/v1/internal/node/register', victim.SecretID, { Node: { ...victim, Status: 'ready' } })).status, 200);
    await submitSecretJob(tmp, s, mgmt);
    await waitFor('the allocations on the victim', async () => {
      const a = (await call<Allocation[]>(s, 'GET', `/v1/node/${victim.ID}/allocations`, victim.SecretID)).body;
      return Array.isArray(a) && a.length === 2 ? a : undefined;
    });

    // The rogue registers the victim's ID with a secret of its own (and with the victim's name).
    const rogueSecret = '99999999-8888-7777-6666-555555555555';
    const takeover = await call(s, 'PUT', '/v1/internal/node/register', rogueSecret, { Node: { ...victim, SecretID: rogueSecret, HTTPAddr: '10.6.6.6:4646', Status: 'ready' } });
    assert.equal(takeover.status, 403, takeover.text);
    // Nothing changed: the victim's secret still works, the rogue's works for nothing.
    const kept = (await call<Node>(s, 'GET', `/v1/node/${victim.ID}`, mgmt)).body;
    assert.equal(kept.HTTPAddr, victim.HTTPAddr);
    assert.equal((await call(s, 'PUT', `/v1/internal/node/${victim.ID}/heartbeat`, victim.SecretID, { Status: 'ready' })).status, 200);
    assert.equal((await call(s, 'PUT', `/v1/internal/node/${victim.ID}/heartbeat`, rogueSecret, { Status: 'ready' })).status, 403);
    const read = await call(s, 'GET', `/v1/node/${victim.ID}/allocations`, rogueSecret);
    assert.equal(read.status, 403);
    assert.ok(!read.text.includes('sk-team-b-secret'));
    // Nor can it report on the victim's allocations.
    const allocs = (await call<Allocation[]>(s, 'GET', `/v1/node/${victim.ID}/allocations`, victim.SecretID)).body;
    const forged = await call(s, 'PUT', '/v1/internal/allocs/update', rogueSecret, { Allocs: [{ ID: allocs[0]!.ID, NodeID: victim.ID, ClientStatus: 'failed', TaskStates: {} }] });
    assert.equal(forged.status, 403);
  } finally {
    for (const a of agents) await a.stop().catch(() => undefined);
    for (const a of agents) await killDataDirProcesses(a.dataDir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});
