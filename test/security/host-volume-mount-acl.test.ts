/**
 * A namespace's submit token mounting host volumes its `host_volume` rules do not allow, as
 * Nomad's job register endpoint refuses it: every mount needs `mount-readwrite`, a read-only one
 * `mount-readonly`, a `bidirectional` propagation `mount-readwrite`; rules name the volume's
 * source, static (the client's config) and dynamic (made with `volume create`) alike. Real
 * agents with ACLs on. Each attempt gets a 403 naming the volume, and the job is not
 * registered (nothing half-applied); a revert to a version the token could not have submitted
 * is refused too.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AclToken } from '../../src/structs/acl.js';
import type { Job } from '../../src/structs/index.js';
import { call, startAclCluster, type AclCluster } from './helpers/acl-cluster.js';

interface Mount {
  source: string;
  readOnly?: unknown;
  propagation?: string;
  perAlloc?: boolean;
}

/** A job of team-a (API JSON) mounting `mounts`; count 0, so nothing is placed. */
function job(id: string, mounts: Mount[]): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Namespace: 'team-a',
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'g',
        Count: 0,
        Volumes: Object.fromEntries(mounts.map((m, i) => [`v${i}`, { Name: `v${i}`, Type: 'host', Source: m.source, ReadOnly: m.readOnly ?? false, PerAlloc: m.perAlloc ?? false }])),
        Tasks: [
          {
            Name: 't',
            Driver: 'raw_exec',
            Config: { command: '/bin/true' },
            VolumeMounts: mounts.map((m, i) => ({ Volume: `v${i}`, Destination: `/v${i}`, ReadOnly: m.readOnly === true, PropagationMode: m.propagation ?? 'private' })),
            Resources: { CPU: 20, MemoryMB: 16 },
          },
        ],
      },
    ],
  };
}

/**
 * The submitter: write in team-a; `certs` read-only, `scratch` (dynamic) read-write, anything
 * under `build-` read-write except `build-secret`; nothing on `ledger`.
 */
const SUBMITTER_POLICY = `
namespace "team-a" {
  policy = "write"
}
host_volume "certs" {
  policy = "read"
}
host_volume "scratch" {
  capabilities = ["mount-readwrite"]
}
host_volume "build-*" {
  policy = "write"
}
host_volume "build-secret" {
  policy = "deny"
}`;

describe('host_volume ACL rules at job submission', () => {
  let c: AclCluster;
  let volDir: string;
  let submitter: AclToken;

  const submit = (token: string, body: Record<string, unknown>) => call(c.server.address, 'PUT', '/v1/jobs', token, { Job: body });
  const registered = async (id: string) => (await call(c.server.address, 'GET', `/v1/job/${id}?namespace=team-a`, c.mgmt)).status === 200;

  before(async () => {
    volDir = await mkdtemp('/tmp/cv-hv-acl-');
    c = await startAclCluster(`client {\n  host_volume "ledger" {\n    path = "${volDir}"\n  }\n  host_volume "certs" {\n    path = "${volDir}"\n    read_only = true\n  }\n}\n`);
    await c.namespace('team-a');
    submitter = await c.token('hv-submitter', SUBMITTER_POLICY);
    for (const name of ['scratch', 'secret-dyn']) {
      const made = await call(c.server.address, 'PUT', '/v1/volume/host/create', c.mgmt, { Volume: { Name: name, Namespace: 'team-a', Type: 'host', PluginID: 'mkdir', NodeID: c.node.ID } });
      assert.equal(made.status, 200, made.text);
    }
  });

  after(async () => {
    await c?.close();
    await rm(volDir, { recursive: true, force: true });
  });

  it('refuses each mount the rules deny with a 403 naming the volume, and registers nothing', async () => {
    const attempts: { name: string; mounts: Mount[]; volume: string; capability: string }[] = [
      { name: 'static volume with no rule, read-write', mounts: [{ source: 'ledger' }], volume: 'ledger', capability: 'mount-readwrite' },
      { name: 'static volume with no rule, read-only', mounts: [{ source: 'ledger', readOnly: true }], volume: 'ledger', capability: 'mount-readonly' },
      { name: 'read-only capability mounting read-write', mounts: [{ source: 'certs' }], volume: 'certs', capability: 'mount-readwrite' },
      { name: 'read-only capability, bidirectional propagation', mounts: [{ source: 'certs', readOnly: true, propagation: 'bidirectional' }], volume: 'certs', capability: 'mount-readwrite' },
      { name: 'a ReadOnly that is not the boolean true asks to write', mounts: [{ source: 'certs', readOnly: 'true' }], volume: 'certs', capability: 'mount-readwrite' },
      { name: 'dynamic volume with no rule', mounts: [{ source: 'secret-dyn' }], volume: 'secret-dyn', capability: 'mount-readwrite' },
      { name: 'a deny beside a matching glob', mounts: [{ source: 'build-secret', readOnly: true }], volume: 'build-secret', capability: 'mount-readonly' },
      { name: 'per_alloc: the rule is on the source', mounts: [{ source: 'ledger', perAlloc: true }], volume: 'ledger', capability: 'mount-readwrite' },
      { name: 'one denied volume among allowed ones', mounts: [{ source: 'scratch' }, { source: 'certs', readOnly: true }, { source: 'ledger', readOnly: true }], volume: 'ledger', capability: 'mount-readonly' },
    ];
    for (const [i, a] of attempts.entries()) {
      const id = `denied-${i}`;
      const res = await submit(submitter.SecretID, job(id, a.mounts));
      assert.equal(res.status, 403, `${a.name}: ${res.text}`);
      assert.match(res.text, /^Permission denied/, a.name);
      assert.ok(res.text.includes(`"${a.volume}"`) && res.text.includes(`"${a.capability}"`), `${a.name}: ${res.text}`);
      assert.equal(await registered(id), false, `${a.name}: nothing registered`);
    }
  });

  it('registers what the rules allow', async () => {
    const allowed: Mount[][] = [
      [{ source: 'certs', readOnly: true }],
      [{ source: 'scratch' }],
      [{ source: 'build-cache', propagation: 'bidirectional' }],
    ];
    for (const [i, mounts] of allowed.entries()) {
      const res = await submit(submitter.SecretID, job(`allowed-${i}`, mounts));
      assert.equal(res.status, 200, res.text);
    }
  });

  it('refuses a revert to a version mounting what the token may not', async () => {
    assert.equal((await submit(c.mgmt, job('reverted', [{ source: 'ledger' }]))).status, 200);
    assert.equal((await submit(c.mgmt, job('reverted', [{ source: 'certs', readOnly: true }]))).status, 200);
    const res = await call(c.server.address, 'PUT', '/v1/job/reverted/revert?namespace=team-a', submitter.SecretID, { JobID: 'reverted', JobVersion: 0 });
    assert.equal(res.status, 403, res.text);
    assert.ok(res.text.includes('"ledger"'), res.text);
    const now = await call<Job>(c.server.address, 'GET', '/v1/job/reverted?namespace=team-a', c.mgmt);
    assert.equal(now.body.Version, 1, 'still the version the submitter could have written');
    assert.equal(now.body.TaskGroups[0]!.Volumes!['v0']!.Source, 'certs');
  });
});
