/**
 * Hostile: the operator's debug endpoints used by whoever reaches the API. Runtime profiles
 * (which hold the agent's memory: a heap snapshot has every token it has seen) and debug
 * bundles are refused without agent:write, and with ACLs off unless the agent runs with
 * enable_debug, as Nomad's; monitor export reads the agent's own log_file only — no parameter
 * points it at a host file, and a journald unit name cannot smuggle a journalctl flag; the gossip
 * keyring needs agent:write; force-leave needs agent:write, and raft peer removal and leadership
 * transfer operator:write (Nomad's rules).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import { call, runCli, startAgent } from '../integration/helpers/agent-process.js';

const PROFILES = ['profile', 'heap', 'allocs', 'trace', 'goroutine', 'threadcreate', 'cmdline'];

test('ACLs off and no enable_debug: no profile, no profiles in a debug bundle; monitor export reads no host file', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'cv-debug-off-'));
  // A file of our own standing for a host secret the attacker wants.
  const secret = join(tmp, 'host-secret.txt');
  await writeFile(secret, 'TOP-SECRET-MARKER\n');
  const plain = await startAgent({ roleArgs: ['-server'] });
  const logged = await startAgent({ roleArgs: ['-server'], extraArgs: ['-log-file', join(tmp, 'agent.log')] });
  try {
    for (const p of PROFILES) {
      const r = await call(plain.address, 'GET', `/v1/agent/pprof/${p}?seconds=1`);
      assert.deepEqual([r.status, r.text], [403, 'Permission denied'], p);
    }
    const debug = await runCli(plain.address, ['operator', 'debug', '-duration', '1s', '-interval', '1s', '-output', tmp], { timeoutMs: 120_000 });
    assert.equal(debug.code, 0, debug.stderr);
    assert.match(debug.stderr, /Pprof retrieval requires agent:write ACL or enable_debug=true/);
    const bundle = join(tmp, readdirSync(tmp).find((d) => d.startsWith('caravan-debug-'))!);
    const serverDir = join(bundle, 'server', readdirSync(join(bundle, 'server'))[0]!);
    assert.deepEqual(readdirSync(serverDir).filter((f) => /profile|heap|goroutine|trace|allocs/.test(f)), []);

    // No log_file: nothing to export, whatever path the request names.
    for (const q of [`NomadLogPath=${secret}`, `log_file=${secret}`, `path=${secret}`, `file=${secret}`]) {
      const r = await call(plain.address, 'GET', `/v1/agent/monitor/export?on_disk=true&${q}`);
      assert.equal(r.status, 400, q);
      assert.doesNotMatch(r.text, /TOP-SECRET-MARKER/);
    }
    // With a log_file: its own log, never the named file.
    const own = await call(logged.address, 'GET', `/v1/agent/monitor/export?on_disk=true&plain=true&NomadLogPath=${encodeURIComponent(secret)}&log_file=${encodeURIComponent(secret)}`);
    assert.equal(own.status, 200);
    assert.doesNotMatch(own.text, /TOP-SECRET-MARKER/);
    assert.match(own.text, /\[INFO\]/);
    // A unit name cannot be a path, a flag, or carry one.
    for (const name of ['../../etc/passwd', '-D/tmp', '--directory=/tmp', 'caravan --file=/tmp/x', 'caravan;cat', 'caravan/../x', `caravan.${'x'.repeat(300)}`]) {
      const r = await call(plain.address, 'GET', `/v1/agent/monitor/export?service_name=${encodeURIComponent(name)}`);
      assert.equal(r.status, 422, `${name}: ${r.status} ${r.text}`);
    }
  } finally {
    for (const a of [plain, logged]) {
      await a.stop();
      await a.cleanup();
    }
    await rm(tmp, { recursive: true, force: true });
  }
});

test('ACLs on: profiles need agent:write, monitor export agent:read, keyring and force-leave agent:write, raft peer and leadership operator:write', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'cv-debug-acl-'));
  const config = join(tmp, 'acl.hcl');
  await writeFile(config, 'acl {\n  enabled = true\n}\n');
  const agent = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), extraArgs: ['-config', config, '-log-file', join(tmp, 'logs/')] });
  try {
    const a = agent.address;
    const boot = await call<AclToken>(a, 'PUT', '/v1/acl/bootstrap');
    assert.equal(boot.status, 200, boot.text);
    const mgmt = boot.body.SecretID;
    const token = async (name: string, rules: string): Promise<string> => {
      assert.equal((await call(a, 'PUT', `/v1/acl/policy/${name}`, mgmt, { Name: name, Rules: rules })).status, 200);
      const t = await call<AclToken>(a, 'PUT', '/v1/acl/token', mgmt, { Name: name, Type: 'client', Policies: [name] });
      assert.equal(t.status, 200, t.text);
      return t.body.SecretID;
    };
    const agentRead = await token('agent-read', 'agent {\n  policy = "read"\n}\nnode {\n  policy = "read"\n}\noperator {\n  policy = "write"\n}\n');
    const agentWrite = await token('agent-write', 'agent {\n  policy = "write"\n}\n');

    for (const p of PROFILES) {
      for (const [who, secret] of [['anonymous', undefined], ['agent:read', agentRead]] as const) {
        const r = await call(a, 'GET', `/v1/agent/pprof/${p}?seconds=1`, secret);
        assert.equal(r.status, 403, `${p} as ${who}`);
      }
    }
    // agent:write is enough with ACLs on (enable_debug is the ACLs-off rule).
    assert.equal((await call(a, 'GET', '/v1/agent/pprof/goroutine?debug=1', agentWrite)).status, 200);

    assert.equal((await call(a, 'GET', '/v1/agent/monitor/export?on_disk=true')).status, 403);
    const exported = await call(a, 'GET', '/v1/agent/monitor/export?on_disk=true&plain=true', agentRead);
    assert.equal(exported.status, 200, exported.text);

    for (const [method, path] of [['GET', '/v1/agent/keyring/list'], ['PUT', '/v1/agent/keyring/install'], ['PUT', '/v1/agent/keyring/use'], ['PUT', '/v1/agent/keyring/remove']] as const) {
      assert.equal((await call(a, method, path, agentRead, method === 'GET' ? undefined : { Key: 'AAAA' })).status, 403, `${path} with agent:read`);
    }
    assert.equal((await call(a, 'PUT', '/v1/agent/force-leave?node=other', agentRead)).status, 403);
    assert.equal((await call(a, 'PUT', '/v1/agent/join?address=127.0.0.1:1', agentRead)).status, 403);
    assert.equal((await call(a, 'DELETE', '/v1/operator/raft/peer?address=127.0.0.1:1', agentWrite)).status, 403);
    assert.equal((await call(a, 'PUT', '/v1/operator/raft/transfer-leadership?id=other', agentWrite)).status, 403);

    // A debug bundle with agent:read only: the cluster's state, no profile.
    const debug = await runCli(a, ['operator', 'debug', '-duration', '1s', '-interval', '1s', '-output', tmp, '-token', agentRead], { timeoutMs: 120_000 });
    assert.equal(debug.code, 0, debug.stderr);
    assert.match(debug.stderr, /Permission denied/);
    const bundle = join(tmp, readdirSync(tmp).find((d) => d.startsWith('caravan-debug-'))!);
    assert.ok(existsSync(join(bundle, 'cluster', 'members.json')));
    const serverDir = join(bundle, 'server', readdirSync(join(bundle, 'server'))[0]!);
    assert.ok(!existsSync(join(serverDir, 'heap.heapsnapshot')));
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
});
