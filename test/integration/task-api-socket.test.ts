/**
 * Nomad's Task API end to end on a -dev agent with ACLs on: an exec task (as nobody, in its
 * sandbox) and a raw_exec task call the API with curl through `${NOMAD_SECRETS_DIR}/api.sock`
 * with their workload identity, read their own job's variable and are refused another job's
 * (403) and any call without a token (401). The socket is the task user's, mode 0600; after the
 * agent is killed and started again, the reattached task's socket answers again (`caravan var
 * get` with NOMAD_ADDR=unix://…/api.sock too); when the job stops, the socket is gone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub } from '../../src/structs/index.js';
import { call, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { killDataDirProcesses } from './helpers/processes.js';
import { waitFor } from './helpers/client-agent.js';
import { callUnix } from './helpers/unix-socket-call.js';

// What each task runs: curl through the socket. No `${` (HCL would interpolate it), no `{{`.
const CHECK = `
cd "$NOMAD_SECRETS_DIR"
st() { curl -si --unix-socket api.sock "$@" | head -n 1 | cut -d ' ' -f 2; }
echo "own=$(st -H "X-Nomad-Token: $NOMAD_TOKEN" http://localhost/v1/var/nomad/jobs/tapi)"
echo "body=$(curl -s --unix-socket api.sock -H "X-Nomad-Token: $NOMAD_TOKEN" http://localhost/v1/var/nomad/jobs/tapi)"
echo "other=$(st -H "X-Nomad-Token: $NOMAD_TOKEN" http://localhost/v1/var/nomad/jobs/other)"
echo "none=$(st http://localhost/v1/var/nomad/jobs/tapi)"
echo done
exec sleep 3600
`;

const task = (name: string, driver: string): string => `
    task "${name}" {
      driver = "${driver}"
      config {
        command = "/bin/sh"
        args    = ["local/check.sh"]
      }
      identity {
        env  = true
        file = true
      }
      template {
        data        = <<EOT
${CHECK}
EOT
        destination = "local/check.sh"
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }`;

const JOB = `
job "tapi" {
  datacenters = ["*"]
  group "g" {
${task('x', 'exec')}
${task('r', 'raw_exec')}
  }
}`;

test('tasks call the API through secrets/api.sock with their identity: own variable yes, another job\'s 403, no token 401; re-created after an agent restart, removed at stop', async () => {
  const dataDir = await mkdtemp('/tmp/cv-tapi-');
  let agent: AgentProcess | undefined;
  try {
    const aclConfig = join(dataDir, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled = true\n}\n');
    const start = (port?: number) => startAgent({ roleArgs: ['-dev'], dataDir, extraArgs: ['-config', aclConfig], readyTimeoutMs: 60_000, ...(port ? { port } : {}) });
    agent = await start();
    const a = agent.address;
    const boot = await runCli(a, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    const mgmt = (JSON.parse(boot.stdout) as AclToken).SecretID;
    await waitFor('the first root key', async () => ((await call<unknown[]>(a, 'GET', '/v1/operator/keyring/keys', mgmt)).body.length > 0 ? true : undefined));
    assert.equal((await call(a, 'PUT', '/v1/var/nomad/jobs/tapi', mgmt, { Items: { k: 'mine' } })).status, 200);
    assert.equal((await call(a, 'PUT', '/v1/var/nomad/jobs/other', mgmt, { Items: { k: 'theirs' } })).status, 200);

    const file = join(dataDir, 'tapi.hcl');
    await writeFile(file, JOB);
    const run = await runCli(a, ['job', 'run', '-detach', file], { env: { CARAVAN_TOKEN: mgmt } });
    assert.equal(run.code, 0, run.stderr);
    const alloc = await waitFor('the tasks running', async () => (await call<AllocListStub[]>(a, 'GET', '/v1/job/tapi/allocations', mgmt)).body.find?.((x) => x.ClientStatus === 'running'), 60_000);

    for (const t of ['x', 'r']) {
      const out = await waitFor(`task ${t}'s calls`, async () => {
        const r = await call(a, 'GET', `/v1/client/fs/cat/${alloc.ID}?path=${encodeURIComponent(`alloc/logs/${t}.stdout.0`)}`, mgmt);
        return r.status === 200 && r.text.includes('done') ? r.text : undefined;
      }, 30_000);
      const line = (k: string): string => out.split('\n').find((l) => l.startsWith(`${k}=`))?.slice(k.length + 1) ?? '';
      assert.equal(line('own'), '200', `${t}: ${out}`);
      assert.match(line('body'), /"Items":\{"k":"mine"\}/, `${t}: ${out}`);
      assert.equal(line('other'), '403', `${t}: ${out}`);
      assert.equal(line('none'), '401', `${t}: ${out}`);
    }

    // exec runs as nobody: the socket is nobody's, 0600; raw_exec's (root) stays root's.
    const secrets = (t: string): string => join(dataDir, 'client', 'alloc', alloc.ID, t, 'secrets');
    const nobodyUid = Number(readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'))!.split(':')[2]);
    const xs = statSync(join(secrets('x'), 'api.sock'));
    assert.ok(xs.isSocket());
    assert.equal(xs.mode & 0o777, 0o600);
    assert.equal(xs.uid, nobodyUid);
    const rs = statSync(join(secrets('r'), 'api.sock'));
    assert.equal(rs.mode & 0o777, 0o600);
    assert.equal(rs.uid, 0);

    // The agent dies (its socket files stay behind) and comes back: the reattached task's socket answers again.
    const identity = readFileSync(join(secrets('r'), 'nomad_token'), 'utf8');
    await agent.kill();
    agent = await start(agent.port);
    const again = await waitFor('the re-created socket', async () => {
      const r = await callUnix(join(secrets('r'), 'api.sock'), 'GET', '/v1/var/nomad/jobs/tapi', identity).catch(() => undefined);
      return r?.status === 200 ? r : undefined;
    }, 30_000);
    assert.match(again.text, /"k":"mine"/);
    // The CLI as a task would run it: NOMAD_ADDR=unix://${NOMAD_SECRETS_DIR}/api.sock, its identity as NOMAD_TOKEN.
    const viaCli = await runCli('', ['var', 'get', '-out', 'json', 'nomad/jobs/tapi'], { env: { CARAVAN_ADDR: '', CARAVAN_TOKEN: '', NOMAD_ADDR: `unix://${join(secrets('r'), 'api.sock')}`, NOMAD_TOKEN: identity } });
    assert.equal(viaCli.code, 0, viaCli.stderr);
    assert.match(viaCli.stdout, /"k": ?"mine"/);

    // Stopped for good: the sockets are gone.
    const stop = await runCli(agent.address, ['job', 'stop', 'tapi'], { env: { CARAVAN_TOKEN: mgmt } });
    assert.equal(stop.code, 0, stop.stderr);
    await waitFor('the sockets removed', () => (existsSync(join(secrets('x'), 'api.sock')) || existsSync(join(secrets('r'), 'api.sock')) ? undefined : true), 30_000);
  } finally {
    await agent?.stop();
    await killDataDirProcesses(dataDir);
    await rm(dataDir, { recursive: true, force: true });
  }
});
