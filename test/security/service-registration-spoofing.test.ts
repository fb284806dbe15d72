/**
 * Attacks on native service discovery, against a real server and client with ACLs on:
 *
 * - A rogue node (registered on its own, as client introduction "warn" lets it) tries to
 *   register a service for team-b's allocation running on the real node, to point team-b's
 *   callers at itself: naming the victim's node, naming its own node, reusing the victim's
 *   registration ID — every attempt is 403 and the real registration is unchanged. It cannot
 *   deregister the victim's registration either.
 * - Path and expression injection through the name, tag and filter of the public reads: a bad
 *   name is refused by the client write with the field named; reads of odd names answer empty
 *   lists, never another route or another namespace's data; a malformed filter is a 400.
 * - ACLs: no token and a token of another namespace read none of team-b's services (403 on
 *   the namespace, nothing in `?namespace=*`), and cannot delete one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub } from '../../src/structs/index.js';
import type { ServiceRegistration, ServiceRegistrationListStub } from '../../src/structs/service-registration.js';
import { mockNode } from '../mock/factories.js';
import { waitFor } from '../integration/helpers/client-agent.js';
import { call, startAclCluster, type AclCluster } from './helpers/acl-cluster.js';

const victimJob = `
job "payments" {
  datacenters = ["dc1"]
  namespace   = "team-b"
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "payments-api"
      provider = "nomad"
      port     = "http"
      tags     = ["prod"]
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

let c: AclCluster;
let victim: AllocListStub;
let real: ServiceRegistration;
let rogue: ReturnType<typeof mockNode>;
let outsider: AclToken;

const instances = async (): Promise<ServiceRegistration[]> => (await call<ServiceRegistration[]>(c.server.address, 'GET', '/v1/service/payments-api?namespace=team-b', c.mgmt)).body;

describe('native service registrations cannot be spoofed, injected or read across namespaces', () => {
  before(async () => {
    c = await startAclCluster();
    await c.namespace('team-b');
    await c.namespace('team-a');
    victim = await c.runJob('payments', 'team-b', victimJob);
    real = await waitFor('the victim registration', async () => (await instances())[0], 30_000);
    outsider = await c.token('outsider', 'namespace "team-a" {\n  policy = "write"\n}');
    rogue = mockNode({ Name: 'rogue', Datacenter: 'dc1' });
    const reg = await call(c.server.address, 'PUT', '/v1/internal/node/register', undefined, { Node: rogue });
    assert.equal(reg.status, 200, `the rogue registers (enforcement warn): ${reg.text}`);
  });
  after(async () => {
    await c?.close();
  });

  it('a rogue node cannot register, overwrite or remove another node\'s registration', async () => {
    const s = c.server.address;
    const spoof = { ...real, Address: '127.0.0.66', Port: 6666 };
    const attempts: [string, unknown][] = [
      ['the victim\'s own registration, re-pointed', spoof],
      ['claiming its own node for the victim allocation', { ...spoof, NodeID: rogue.ID }],
      ['a fresh ID of the victim allocation', { ...spoof, ID: `_nomad-task-${victim.ID}-t-payments-api-x` }],
      ['another namespace\'s name for its own node', { ...spoof, NodeID: rogue.ID, Namespace: 'team-a' }],
    ];
    for (const [what, body] of attempts) {
      const r = await call(s, 'PUT', '/v1/internal/services/register', rogue.SecretID, { Services: [body] });
      assert.equal(r.status, 403, `${what}: ${r.status} ${r.text}`);
    }
    const del = await call(s, 'PUT', '/v1/internal/services/deregister', rogue.SecretID, { IDs: [real.ID] });
    assert.equal(del.status, 403, del.text);
    // Without any secret, the internal routes are refused outright.
    assert.equal((await call(s, 'PUT', '/v1/internal/services/register', undefined, { Services: [spoof] })).status, 403);
    const now = await instances();
    assert.deepEqual(now.map((r) => [r.ID, r.Address, r.Port]), [[real.ID, real.Address, real.Port]]);
  });

  it('names, tags and filters that try path or expression injection are refused or match nothing', async () => {
    const s = c.server.address;
    // The real node's secret is not the attacker's; the shape check runs before any lookup, so a
    // bad name is refused with the field named whoever sends it.
    const bad = await call(s, 'PUT', '/v1/internal/services/register', rogue.SecretID, { Services: [{ ...real, ServiceName: '../../v1/acl/tokens' }] });
    assert.equal(bad.status, 400, bad.text);
    assert.match(bad.text, /Services\[0\]\.ServiceName/);
    for (const path of [
      '/v1/service/..%2F..%2Fv1%2Facl%2Ftokens?namespace=team-b',
      '/v1/service/payments-api%00?namespace=team-b',
      '/v1/service/payments-api?namespace=team-b&tag=%22%20or%20%221%22%3D%3D%221',
      '/v1/service/*?namespace=team-b',
    ]) {
      const r = await call<unknown[]>(s, 'GET', path, c.mgmt);
      assert.ok(r.status === 200 || r.status === 404, `${path}: ${r.status} ${r.text}`);
      if (r.status === 200) assert.deepEqual(r.body, [], path);
      assert.ok(!r.text.includes('SecretID'), path);
    }
    const filter = await call(s, 'GET', `/v1/service/payments-api?namespace=team-b&filter=${encodeURIComponent('Namespace == "team-b" or (')}`, c.mgmt);
    assert.equal(filter.status, 400, filter.text);
    const choose = await call(s, 'GET', `/v1/service/payments-api?namespace=team-b&choose=${encodeURIComponent('1|x|y')}`, c.mgmt);
    assert.equal(choose.status, 200, 'a key may hold anything after the first bar');
  });

  it('a token without read-job in team-b reads none of its services and deletes none', async () => {
    const s = c.server.address;
    for (const token of [undefined, outsider.SecretID]) {
      const one = await call(s, 'GET', '/v1/service/payments-api?namespace=team-b', token);
      assert.equal(one.status, 403, one.text);
      const list = await call(s, 'GET', '/v1/services?namespace=team-b', token);
      assert.equal(list.status, 403, list.text);
      const del = await call(s, 'DELETE', `/v1/service/payments-api/${encodeURIComponent(real.ID)}?namespace=team-b`, token);
      assert.equal(del.status, 403, del.text);
      const job = await call(s, 'GET', '/v1/job/payments/services?namespace=team-b', token);
      assert.equal(job.status, 403, job.text);
    }
    const all = await call<ServiceRegistrationListStub[]>(s, 'GET', '/v1/services?namespace=*', outsider.SecretID);
    assert.equal(all.status, 200, all.text);
    assert.ok(all.body.every((ns) => ns.Namespace !== 'team-b'), all.text);
    assert.equal((await instances()).length, 1);
    // The management token may delete it (the operator's escape hatch), by name and ID.
    const wrongName = await call(s, 'DELETE', `/v1/service/other/${encodeURIComponent(real.ID)}?namespace=team-b`, c.mgmt);
    assert.equal(wrongName.status, 404, wrongName.text);
    const ok = await call(s, 'DELETE', `/v1/service/payments-api/${encodeURIComponent(real.ID)}?namespace=team-b`, c.mgmt);
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(await instances(), []);
  });
});
