/**
 * Attacks on the Task API socket (`secrets/api.sock`) on real -dev agents.
 *
 * ACLs off (the socket still demands a token, as Nomad's): a request without one is 401; a made-up
 * token and the anonymous token's secret are 403; only a workload identity of the cluster gets
 * through, for plain requests and exec sessions alike. Before the tasks start, a prestart task (root) plants symlinks where their sockets
 * go: one to a host file it made for the purpose, one into a host directory it made. The agent
 * neither unlinks the file nor binds a socket in the directory: it replaces the links themselves.
 *
 * ACLs on, a server and a client-only agent (which resolves tokens through the server): the
 * socket confers nothing of its own — job a's socket with job b's identity reads b's
 * variable, not a's; through it a task has neither the agent's privileges (agent:read/write,
 * node:read, so no node secret; management routes; job registration) nor the anonymous policy,
 * even one that grants variable reads; and agent-to-agent routes (/v1/internal/*) are not served.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub } from '../../src/structs/index.js';
import { call, execOnce, runCli, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { killDataDirProcesses } from '../integration/helpers/processes.js';
import { waitFor } from '../integration/helpers/client-agent.js';
import { callUnix } from '../integration/helpers/unix-socket-call.js';
import { startAclCluster, type AclCluster } from './helpers/acl-cluster.js';

const sleeper = (name: string): string => `
    task "${name}" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      identity {
        file = true
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }`;

/** A job of one group: sleepers `tasks`, after a prestart task running `plant` when given. */
const job = (id: string, tasks: string[], plant?: string): string => `
job "${id}" {
  datacenters = ["*"]
  # batch: the prestart task's exit 0 is final.
  type        = "batch"
  group "g" {
${plant ? `    task "plant" {
      driver = "raw_exec"
      lifecycle {
        hook = "prestart"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(plant)}]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }` : ''}
${tasks.map(sleeper).join('\n')}
  }
}`;

async function runningAlloc(address: string, jobId: string, token?: string): Promise<AllocListStub> {
  return waitFor(`${jobId} running`, async () => (await call<AllocListStub[]>(address, 'GET', `/v1/job/${jobId}/allocations`, token)).body.find?.((x) => x.ClientStatus === 'running'), 60_000);
}

/** The socket and identity of task `task` of `alloc`, once its socket answers. */
async function taskSocket(dataDir: string, alloc: string, task: string): Promise<{ sock: string; identity: string }> {
  const secrets = join(dataDir, 'client', 'alloc', alloc, task, 'secrets');
  return waitFor(`the socket of ${task}`, () => {
    const sock = join(secrets, 'api.sock');
    if (!existsSync(sock) || !lstatSync(sock).isSocket() || !existsSync(join(secrets, 'nomad_token'))) return undefined;
    return { sock, identity: readFileSync(join(secrets, 'nomad_token'), 'utf8') };
  }, 30_000);
}

describe('task api socket, ACLs off', () => {
  let dataDir = '';
  let agent: AgentProcess | undefined;
  before(async () => {
    dataDir = await mkdtemp('/tmp/cv-tapi-off-');
    agent = await startAgent({ roleArgs: ['-dev'], dataDir, readyTimeoutMs: 60_000 });
  });
  after(async () => {
    await agent?.stop();
    await killDataDirProcesses(dataDir);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('demands a token of the cluster; a symlink planted at api.sock is replaced, never followed', async () => {
    const victimFile = join(dataDir, 'victim.txt');
    const victimDir = join(dataDir, 'victim-dir');
    await writeFile(victimFile, 'host file\n');
    await mkdir(victimDir);
    // The prestart task runs before the sleepers' directories exist: it makes their secrets/ and plants the links.
    const plant = `mkdir -p ../f/secrets ../d/secrets && ln -s ${victimFile} ../f/secrets/api.sock && ln -s ${victimDir}/api.sock ../d/secrets/api.sock`;
    const file = join(dataDir, 'plant.hcl');
    await writeFile(file, job('plant', ['f', 'd'], plant));
    const run = await runCli(agent!.address, ['job', 'run', '-detach', file]);
    assert.equal(run.code, 0, run.stderr);
    const alloc = await runningAlloc(agent!.address, 'plant');
    const f = await taskSocket(dataDir, alloc.ID, 'f');
    const d = await taskSocket(dataDir, alloc.ID, 'd');

    // The links were replaced by the sockets; what they pointed at is untouched.
    assert.equal(readFileSync(victimFile, 'utf8'), 'host file\n');
    assert.ok(lstatSync(victimFile).isFile());
    assert.deepEqual(readdirSync(victimDir), []);

    for (const { sock, identity } of [f, d]) {
      assert.equal((await callUnix(sock, 'GET', '/v1/agent/self')).status, 401);
      assert.equal((await callUnix(sock, 'GET', '/v1/agent/self', '37297754-3b87-41da-9ac7-d98fd934deed')).status, 403);
      assert.equal((await callUnix(sock, 'GET', '/v1/agent/self', 'anonymous')).status, 403);
      assert.equal((await callUnix(sock, 'GET', '/v1/agent/self', 'a.b.c')).status, 403);
      // With ACLs off an authenticated caller may do what any API caller may (Nomad's rule).
      assert.equal((await callUnix(sock, 'GET', '/v1/agent/self', identity)).status, 200);
    }
    // Exec sessions (websockets) over the socket authenticate the same way.
    const viaSocket = `http+unix://${f.sock}:`;
    await assert.rejects(execOnce(viaSocket, alloc.ID, ['echo', 'hi'], {}, 'f'), /401/);
    await assert.rejects(execOnce(viaSocket, alloc.ID, ['echo', 'hi'], { 'X-Nomad-Token': 'anonymous' }, 'f'), /403/);
    assert.equal((await execOnce(viaSocket, alloc.ID, ['echo', 'hi'], { 'X-Nomad-Token': f.identity }, 'f')).stdout, 'hi\n');
    // The TCP listener is unchanged: no token needed with ACLs off.
    assert.equal((await call(agent!.address, 'GET', '/v1/agent/self')).status, 200);
  });
});

describe('task api socket, ACLs on, on a client-only agent (tokens resolved through its server)', () => {
  let cluster: AclCluster | undefined;
  let dataDir = '';
  let mgmt = '';
  before(async () => {
    cluster = await startAclCluster();
    dataDir = cluster.client.dataDir;
    mgmt = cluster.mgmt;
    await waitFor('the first root key', async () => ((await call<unknown[]>(cluster!.server.address, 'GET', '/v1/operator/keyring/keys', mgmt)).body.length > 0 ? true : undefined));
  });
  after(async () => {
    await cluster?.close();
  });

  it('an identity is only what it allows, the socket adds nothing: no agent, node, management or anonymous privileges', async () => {
    const a = cluster!.server.address;
    for (const [path, k] of [['nomad/jobs/a', 'of a'], ['nomad/jobs/b', 'of b'], ['open/x', 'anon']]) {
      assert.equal((await call(a, 'PUT', `/v1/var/${path}`, mgmt, { Items: { k } })).status, 200);
    }
    // An anonymous policy that lets anyone read open/*: the Task API does not offer it.
    const anonRules = join(cluster!.tmp, 'anon.hcl');
    await writeFile(anonRules, 'namespace "default" {\n  variables {\n    path "open/*" {\n      capabilities = ["read"]\n    }\n  }\n}\n');
    const apply = await runCli(a, ['acl', 'policy', 'apply', 'anonymous', anonRules], { env: { CARAVAN_TOKEN: mgmt } });
    assert.equal(apply.code, 0, apply.stderr);
    assert.equal((await call(a, 'GET', '/v1/var/open/x')).status, 200, 'the anonymous policy works on the TCP listener');

    for (const id of ['a', 'b']) {
      const file = join(cluster!.tmp, `${id}.hcl`);
      await writeFile(file, job(id, ['t']));
      const run = await runCli(a, ['job', 'run', '-detach', file], { env: { CARAVAN_TOKEN: mgmt } });
      assert.equal(run.code, 0, run.stderr);
    }
    const sa = await taskSocket(dataDir, (await runningAlloc(a, 'a', mgmt)).ID, 't');
    const sb = await taskSocket(dataDir, (await runningAlloc(a, 'b', mgmt)).ID, 't');

    // Job a's socket with job b's identity: b's variable, not a's.
    assert.equal((await callUnix(sa.sock, 'GET', '/v1/var/nomad/jobs/a', sa.identity)).status, 200);
    assert.equal((await callUnix(sa.sock, 'GET', '/v1/var/nomad/jobs/b', sb.identity)).status, 200);
    assert.equal((await callUnix(sa.sock, 'GET', '/v1/var/nomad/jobs/a', sb.identity)).status, 403);
    assert.equal((await callUnix(sa.sock, 'GET', '/v1/var/nomad/jobs/b', sa.identity)).status, 403);

    // No anonymous access: no token is 401, the anonymous secret 403, though the policy grants the read.
    assert.equal((await callUnix(sa.sock, 'GET', '/v1/var/open/x')).status, 401);
    assert.equal((await callUnix(sa.sock, 'GET', '/v1/var/open/x', 'anonymous')).status, 403);

    // None of the agent's privileges through the socket.
    const nodeId = (await call<{ ID: string }[]>(a, 'GET', '/v1/nodes', mgmt)).body[0]!.ID;
    const refused: [string, string, unknown?][] = [
      ['GET', '/v1/agent/self'],
      ['PUT', '/v1/agent/join?address=127.0.0.1:1'],
      ['PUT', '/v1/agent/force-leave?node=x'],
      ['GET', '/v1/agent/pprof/heap'],
      ['GET', `/v1/node/${nodeId}`],
      ['GET', '/v1/nodes'],
      ['GET', '/v1/acl/tokens'],
      ['GET', '/v1/operator/keyring/keys'],
      ['PUT', '/v1/var/nomad/jobs/a', { Items: { k: 'overwritten' } }],
      ['PUT', '/v1/jobs', { Job: { ID: 'evil', Name: 'evil', Type: 'batch', Datacenters: ['*'], TaskGroups: [] } }],
      ['PUT', '/v1/internal/task/identities', { AllocID: 'x', Task: 't', Identities: ['default'] }],
      ['GET', '/v1/internal/nothing'],
    ];
    for (const [method, path, body] of refused) {
      const r = await callUnix(sa.sock, method, path, sa.identity, body);
      assert.equal(r.status, 403, `${method} ${path}: ${r.status} ${r.text}`);
      assert.ok(!r.text.includes('SecretID'), `${method} ${path} leaked a secret`);
    }
    assert.equal((await call<{ Items: { k: string } }>(a, 'GET', '/v1/var/nomad/jobs/a', mgmt)).body.Items.k, 'of a');
    // An ACL token works through the socket as through TCP (management here).
    assert.equal((await callUnix(sa.sock, 'GET', '/v1/agent/self', mgmt)).status, 200);
  });
});
