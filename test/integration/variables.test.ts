/**
 * Variables through a real agent: /v1/vars and /v1/var/:path with check-and-set (a stale index
 * is a 409 carrying the current variable, and nothing changes), namespaces, prefix and filter
 * lists, bad paths refused by name, the `var` CLI, the variables surviving a restart, and with
 * ACLs on (which /v1/agent/self's ACL section reports), the policy's `variables { path … }` rules deciding reads, writes and lists.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import type { Variable, VariableMetadata } from '../../src/structs/variable.js';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';

test('variables: CRUD with check-and-set, namespaces, lists, CLI, restart', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-vars-'));
  const dataDir = join(tmp, 'data');
  let agent: AgentProcess | undefined = await startAgent({ roleArgs: ['-server'], dataDir });
  try {
    let a = agent.address;
    assert.deepEqual((await api(a, 'GET', '/v1/vars')).body, []);
    const self = await api<{ config: { ACL: { Enabled: boolean }; UI: { Enabled: boolean }; Telemetry: { PrometheusMetrics: boolean } } }>(a, 'GET', '/v1/agent/self');
    assert.deepEqual([self.body.config.ACL.Enabled, self.body.config.UI.Enabled, self.body.config.Telemetry.PrometheusMetrics], [false, true, true]);
    // No provider = "nomad" registrations yet: the service lists are empty, never 404s.
    for (const p of ['/v1/services', '/v1/services?namespace=*', '/v1/service/web']) {
      const r = await api(a, 'GET', p);
      assert.deepEqual([r.status, r.body], [200, []], p);
    }

    // Create only if absent (cas=0), then a stale cas=0 is a 409 with the current variable.
    const created = await api<Variable>(a, 'PUT', '/v1/var/app/db?cas=0', { Items: { user: 'admin', pass: 's3cret' } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual([created.body.Namespace, created.body.Path, created.body.Items], ['default', 'app/db', { user: 'admin', pass: 's3cret' }]);
    const v1 = created.body.ModifyIndex;
    assert.ok(v1 > 0 && created.body.CreateIndex === v1 && created.body.ModifyTime > 0);

    const stale = await api<Variable>(a, 'PUT', '/v1/var/app/db?cas=0', { Items: { user: 'other' } });
    assert.equal(stale.status, 409);
    assert.deepEqual([stale.body.ModifyIndex, stale.body.Items], [v1, { user: 'admin', pass: 's3cret' }]);
    assert.equal(stale.index, v1);
    const wrong = await api<Variable>(a, 'PUT', `/v1/var/app/db?cas=${v1 + 100}`, { Items: { user: 'other' } });
    assert.equal(wrong.status, 409);
    const read = await api<Variable>(a, 'GET', '/v1/var/app/db');
    assert.deepEqual([read.status, read.body.Items['user'], read.index], [200, 'admin', v1]);

    // The right index updates; CreateIndex stays.
    const updated = await api<Variable>(a, 'PUT', `/v1/var/app/db?cas=${v1}`, { Items: { user: 'admin', pass: 'rotated' } });
    assert.equal(updated.status, 200, updated.text);
    assert.ok(updated.body.ModifyIndex > v1);
    assert.equal(updated.body.CreateIndex, v1);

    // Bad input is a 4xx naming the problem, with nothing written.
    for (const [path, body, re] of [
      ['/v1/var/has%20space', { Items: { a: 'b' } }, /invalid path "has space"/],
      ['/v1/var/nomad/secrets', { Items: { a: 'b' } }, /only paths at "nomad\/jobs"/],
      ['/v1/var/app/empty', { Items: {} }, /variable missing required Items object/],
      ['/v1/var/app/db?cas=abc', { Items: { a: 'b' } }, /can not parse cas/],
      ['/v1/var/app/x?namespace=nope', { Items: { a: 'b' } }, /namespace "nope" not found/],
    ] as const) {
      const r = await api(a, 'PUT', path, body);
      assert.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status} ${r.text}`);
      assert.match(r.text, re);
    }
    assert.equal((await api(a, 'GET', '/v1/var/app/missing')).status, 404);
    assert.match((await api(a, 'GET', '/v1/var/app/missing')).text, /variable not found/);

    // A second namespace; lists by prefix, namespace, `*`, filter and pages.
    assert.equal((await api(a, 'PUT', '/v1/namespace/team', { Name: 'team' })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/var/app/web?namespace=team', { Items: { port: '80' } })).status, 200);
    assert.equal((await api(a, 'PUT', '/v1/var/other/x', { Namespace: 'default', Items: { y: 'z' } })).status, 200);
    const paths = async (q: string) => (await api<VariableMetadata[]>(a, 'GET', `/v1/vars${q}`)).body.map((v) => `${v.Namespace}:${v.Path}`);
    assert.deepEqual(await paths(''), ['default:app/db', 'default:other/x']);
    assert.deepEqual(await paths('?prefix=app'), ['default:app/db']);
    assert.deepEqual(await paths('?namespace=*'), ['default:app/db', 'default:other/x', 'team:app/web']);
    assert.deepEqual(await paths('?namespace=*&filter=' + encodeURIComponent('Namespace == "team"')), ['team:app/web']);
    const page = await api<VariableMetadata[]>(a, 'GET', '/v1/vars?per_page=1');
    assert.equal(page.body.length, 1);
    assert.ok('Items' in page.body[0]! === false, 'lists carry metadata only');
    assert.equal((await api(a, 'GET', '/v1/vars?filter=' + encodeURIComponent('Path ==='))).status, 400);

    // The CLI.
    const list = await runCli(a, ['var', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /Namespace\s+Path\s+Last Updated/);
    assert.match(list.stdout, /default\s+app\/db/);
    assert.equal((await runCli(a, ['var', 'list', '-out', 'terse', 'app'])).stdout, 'app/db\n');
    assert.deepEqual((JSON.parse((await runCli(a, ['var', 'list', '-out', 'json'])).stdout) as VariableMetadata[]).map((x) => x.Path), ['app/db', 'other/x']);
    const put = await runCli(a, ['var', 'put', 'cli/one', 'k=v', 'n=1']);
    assert.equal(put.code, 0, put.stderr);
    const cliIndex = Number(/with modify index (\d+)/.exec(put.stdout)?.[1]);
    assert.ok(cliIndex > 0, put.stdout);
    const conflict = await runCli(a, ['var', 'put', '-check-index', String(cliIndex - 1), 'cli/one', 'k=changed']);
    assert.equal(conflict.code, 1);
    assert.match(conflict.stderr, new RegExp(`Check-and-Set conflict[\\s\\S]*check-index \\(${cliIndex - 1}\\)[\\s\\S]*server-side index \\(${cliIndex}\\)`));
    const get = await runCli(a, ['var', 'get', 'cli/one']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /Path\s+= cli\/one/);
    assert.match(get.stdout, /k\s+= v/);
    assert.equal((await runCli(a, ['var', 'get', 'cli/one', 'n'])).stdout, '1\n');
    assert.equal((await runCli(a, ['var', 'get', '-item', 'k', 'cli/one'])).stdout, 'v');
    assert.deepEqual((JSON.parse((await runCli(a, ['var', 'get', '-out', 'json', 'cli/one'])).stdout) as Variable).Items, { k: 'v', n: '1' });
    assert.equal((await runCli(a, ['var', 'get', '-out', 'yaml', 'cli/one'])).code, 2);
    const json = await runCli(a, ['var', 'get', '-json', 'cli/one']);
    assert.deepEqual((JSON.parse(json.stdout) as Variable).Items, { k: 'v', n: '1' });
    const purgeStale = await runCli(a, ['var', 'purge', '-check-index', '1', 'cli/one']);
    assert.equal(purgeStale.code, 1);
    assert.ok((await api(a, 'GET', '/v1/var/cli/one')).status === 200, 'a stale purge deletes nothing');
    const purge = await runCli(a, ['var', 'purge', '-check-index', String(cliIndex), 'cli/one']);
    assert.equal(purge.code, 0, purge.stderr);
    assert.match(purge.stdout, /Successfully purged variable "cli\/one"!/);
    assert.equal((await api(a, 'GET', '/v1/var/cli/one')).status, 404);

    // Variable specifications: var init writes one; var put reads it (@file, or - with -in),
    // the path and namespace from it or the command line, key=value items winning over its own.
    const init = await runCli(a, ['var', 'init'], { cwd: tmp });
    assert.equal(init.code, 0, init.stderr);
    assert.equal(init.stdout, 'Example variable specification written to spec.nv.hcl\n');
    assert.equal((await runCli(a, ['var', 'init'], { cwd: tmp })).code, 1, 'never overwrites');
    assert.equal((await runCli(a, ['var', 'init', '-out', 'json'], { cwd: tmp })).code, 0);
    const fromInit = await runCli(a, ['var', 'put', 'spec/init', `@${join(tmp, 'spec.nv.hcl')}`, 'key2=override']);
    assert.equal(fromInit.code, 0, fromInit.stderr);
    assert.deepEqual((await api<Variable>(a, 'GET', '/v1/var/spec/init')).body.Items, { key1: 'value 1', key2: 'override' });
    await writeFile(join(tmp, 'team.nv.hcl'), 'path = "spec/team"\nnamespace = "team"\nitems {\n  user = "dba"\n}\n');
    assert.equal((await runCli(a, ['var', 'put', `@${join(tmp, 'team.nv.hcl')}`])).code, 0);
    assert.deepEqual((await api<Variable>(a, 'GET', '/v1/var/spec/team?namespace=team')).body.Items, { user: 'dba' });
    const piped = JSON.stringify((await api<Variable>(a, 'GET', '/v1/var/spec/init')).body);
    const fromStdin = await runCli(a, ['var', 'put', '-in', 'json', 'spec/copy', '-', 'extra=1'], { input: piped });
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    assert.deepEqual((await api<Variable>(a, 'GET', '/v1/var/spec/copy')).body.Items, { key1: 'value 1', key2: 'override', extra: '1' });
    // Check-and-set by default, as Nomad's: a plain put over an existing variable conflicts (with
    // the way out named), -force writes; get | put carries the index it read, and is refused once
    // stale; `key=` removes an item.
    const over = await runCli(a, ['var', 'put', 'spec/init', 'key1=again']);
    assert.equal(over.code, 1);
    assert.match(over.stderr, /Check-and-Set conflict[\s\S]*check-index \(0\) does not match[\s\S]*add the -force or\s+-check-index=\d+ flag/);
    assert.equal((await runCli(a, ['var', 'put', '-force', 'spec/init', 'key1=forced'])).code, 0);
    const fetched = (await runCli(a, ['var', 'get', '-out', 'json', 'spec/init'])).stdout;
    const edited = await runCli(a, ['var', 'put', '-in', 'json', '-', 'key2='], { input: fetched });
    assert.equal(edited.code, 0, edited.stderr);
    assert.deepEqual((await api<Variable>(a, 'GET', '/v1/var/spec/init')).body.Items, { key1: 'forced' });
    const late = await runCli(a, ['var', 'put', '-in', 'json', '-', 'key1=late'], { input: fetched });
    assert.equal(late.code, 1, 'the index read before the last write is stale');
    assert.match(late.stderr, /Check-and-Set conflict/);
    await writeFile(join(tmp, 'bad.nv.hcl'), 'items {\n  n = ["a"]\n}\n');
    const bad = await runCli(a, ['var', 'put', 'spec/bad', `@${join(tmp, 'bad.nv.hcl')}`]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^Error parsing variable specification \(.*bad\.nv\.hcl\): items\.n must be a string/);
    assert.equal((await api(a, 'GET', '/v1/var/spec/bad')).status, 404, 'a bad specification writes nothing');
    assert.equal((await runCli(a, ['var', 'put', `@${join(tmp, 'nowhere.hcl')}`])).code, 1);
    for (const path of ['spec/init', 'spec/copy', 'spec/team?namespace=team']) assert.equal((await api(a, 'DELETE', `/v1/var/${path}`)).status, 204);

    // DELETE answers 204; a stale check-and-set delete a 409.
    const delStale = await api<Variable>(a, 'DELETE', '/v1/var/other/x?cas=1');
    assert.equal(delStale.status, 409);
    assert.equal((await api(a, 'DELETE', '/v1/var/other/x')).status, 204);

    // Variables are replicated state: they survive a restart.
    await agent.stop();
    agent = await startAgent({ roleArgs: ['-server'], dataDir });
    a = agent.address;
    const after = await api<Variable>(a, 'GET', '/v1/var/app/db');
    assert.deepEqual([after.status, after.body.Items['pass'], after.body.ModifyIndex], [200, 'rotated', updated.body.ModifyIndex]);
    assert.deepEqual(await paths('?namespace=*'), ['default:app/db', 'team:app/web']);
  } finally {
    await agent?.stop();
    await rm(tmp, { recursive: true, force: true });
  }
});

test('variables with ACLs: the policy`s variables path rules decide', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-vars-acl-'));
  let agent: AgentProcess | undefined;
  try {
    const aclConfig = join(tmp, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled = true\n}\n');
    agent = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 'data'), extraArgs: ['-config', aclConfig] });
    const a = agent.address;
    const boot = await runCli(a, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    const mgmt = (JSON.parse(boot.stdout) as AclToken).SecretID;
    // /v1/agent/self tells clients (the web UI's ACL controls) that ACLs are on.
    const self = await fetch(`${a}/v1/agent/self`, { headers: { 'X-Nomad-Token': mgmt } });
    const selfBody = (await self.json()) as { config: { ACL: { Enabled: boolean; TokenTTL: number } } };
    assert.deepEqual([selfBody.config.ACL.Enabled, selfBody.config.ACL.TokenTTL > 0], [true, true]);
    const policy = join(tmp, 'vars.hcl');
    await writeFile(
      policy,
      'namespace "default" {\n  variables {\n    path "app/*" { capabilities = ["read", "list"] }\n    path "app/mine" { capabilities = ["write", "read", "list", "destroy"] }\n  }\n}\n',
    );
    assert.equal((await runCli(a, ['acl', 'policy', 'apply', '-token', mgmt, 'vars', policy])).code, 0);
    const created = await runCli(a, ['acl', 'token', 'create', '-token', mgmt, '-name', 'v', '-policy', 'vars', '-json']);
    assert.equal(created.code, 0, created.stderr);
    const tok = (JSON.parse(created.stdout) as AclToken).SecretID;
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await fetch(`${a}${path}`, { method, headers: { 'X-Nomad-Token': token }, ...(body ? { body: JSON.stringify(body) } : {}) });
      const text = await res.text();
      return { status: res.status, text };
    };
    for (const p of ['app/shared', 'secret/x']) assert.equal((await call('PUT', `/v1/var/${p}`, mgmt, { Items: { a: 'b' } })).status, 200);

    assert.equal((await call('GET', '/v1/var/app/shared', tok)).status, 200);
    assert.equal((await call('GET', '/v1/var/secret/x', tok)).status, 403);
    assert.equal((await call('GET', '/v1/var/app/shared', '')).status, 403);
    assert.equal((await call('PUT', '/v1/var/app/shared', tok, { Items: { a: 'c' } })).status, 403);
    assert.equal((await call('PUT', '/v1/var/app/mine', tok, { Items: { a: 'c' } })).status, 200);
    assert.equal((await call('DELETE', '/v1/var/app/shared', tok)).status, 403);
    const list = JSON.parse((await call('GET', '/v1/vars', tok)).text) as VariableMetadata[];
    assert.deepEqual(list.map((v) => v.Path), ['app/mine', 'app/shared']);
    assert.equal((await call('DELETE', '/v1/var/app/mine', tok)).status, 204);
  } finally {
    await agent?.stop();
    await rm(tmp, { recursive: true, force: true });
  }
});
