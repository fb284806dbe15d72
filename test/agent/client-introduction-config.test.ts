/**
 * The agent configuration of client introduction, with Nomad's names: the server's
 * `client_introduction` block (default enforcement "warn", 5m / 30m), the client's `node_pool`,
 * and the client's introduction token from -client-intro-token or NOMAD_CLIENT_INTRO_TOKEN
 * (which wins) — never from a configuration file, which names where it goes instead. The client
 * also reads `<data_dir>/client/intro_token.jwt`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentConfigError } from '../../src/agent/agent-config.js';
import { buildAgentConfig } from '../../src/cli/commands/agent.js';
import { loadIntroToken } from '../../src/client/node/intro-token.js';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-intro-cfg-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('Nomad\'s defaults: enforcement "warn", tokens of 5 minutes at most 30, pool "default", no token', async () => {
  const c = await buildAgentConfig({ dev: true });
  assert.deepEqual(c.server.clientIntroduction, { enforcement: 'warn', defaultIdentityTtlMs: 300_000, maxIdentityTtlMs: 1_800_000 });
  assert.equal(c.client.nodePool, 'default');
  assert.equal(c.client.introToken, undefined);
});

test('server { client_introduction { … } } and client { node_pool } are read', async () => {
  await withDir(async (dir) => {
    const f = join(dir, 'a.hcl');
    await writeFile(f, 'server {\n  enabled = true\n  client_introduction {\n    enforcement = "strict"\n    default_identity_ttl = "10m"\n    max_identity_ttl = "1h"\n  }\n}\nclient {\n  node_pool = "platform"\n}\n');
    const c = await buildAgentConfig({ config: [f], dataDir: dir });
    assert.deepEqual(c.server.clientIntroduction, { enforcement: 'strict', defaultIdentityTtlMs: 600_000, maxIdentityTtlMs: 3_600_000 });
    assert.equal(c.client.nodePool, 'platform');
  });
});

test('the intro token comes from the flag, and the environment wins over it (as NOMAD_CLIENT_INTRO_TOKEN)', async () => {
  const flag = await buildAgentConfig({ dev: true, clientIntroToken: 'from.the.flag' });
  assert.equal(flag.client.introToken, 'from.the.flag');
  const env = await buildAgentConfig({ dev: true, clientIntroToken: 'from.the.flag' }, { NOMAD_CLIENT_INTRO_TOKEN: 'from.nomad.env' });
  assert.equal(env.client.introToken, 'from.nomad.env');
  const ours = await buildAgentConfig({ dev: true }, { NOMAD_CLIENT_INTRO_TOKEN: 'from.nomad.env', CARAVAN_CLIENT_INTRO_TOKEN: 'from.caravan.env' });
  assert.equal(ours.client.introToken, 'from.caravan.env');
  const pool = await buildAgentConfig({ dev: true, nodePool: 'gpu' });
  assert.equal(pool.client.nodePool, 'gpu');
});

test('bad client introduction settings name the field', async () => {
  await withDir(async (dir) => {
    const cases: { name: string; text: string; field: string; reason: RegExp }[] = [
      { name: 'unknown enforcement', text: 'server {\n  client_introduction {\n    enforcement = "strictest"\n  }\n}\n', field: 'server.client_introduction.enforcement', reason: /invalid enforcement "strictest"/ },
      { name: 'bad duration', text: 'server {\n  client_introduction {\n    default_identity_ttl = "soon"\n  }\n}\n', field: 'server.client_introduction.default_identity_ttl', reason: /duration/ },
      { name: 'default above max', text: 'server {\n  client_introduction {\n    default_identity_ttl = "1h"\n    max_identity_ttl = "30m"\n  }\n}\n', field: 'server.client_introduction.max_identity_ttl', reason: /greater than or equal to default_identity_ttl/ },
      { name: 'zero TTL', text: 'server {\n  client_introduction {\n    max_identity_ttl = "0s"\n  }\n}\n', field: 'server.client_introduction.max_identity_ttl', reason: /greater than 0/ },
      { name: 'intro token in a file', text: 'client {\n  intro_token = "eyJ.x.y"\n}\n', field: 'client.intro_token', reason: /not read from configuration files: use -client-intro-token, NOMAD_CLIENT_INTRO_TOKEN, or the file <data_dir>\/client\/intro_token\.jwt/ },
      { name: 'the pool "all"', text: 'client {\n  node_pool = "all"\n}\n', field: 'client.node_pool', reason: /"all"/ },
    ];
    for (const c of cases) {
      const f = join(dir, `${c.name.replace(/\W/g, '-')}.hcl`);
      await writeFile(f, c.text);
      await assert.rejects(buildAgentConfig({ dev: true, config: [f] }), (err: unknown) => {
        assert.ok(err instanceof AgentConfigError, c.name);
        assert.equal(err.field, c.field, c.name);
        assert.match(err.message, c.reason, c.name);
        // The value of a secret is never echoed back.
        assert.ok(!err.message.includes('eyJ.x.y'), c.name);
        return true;
      });
    }
  });
});

test('the client reads <its data dir>/intro_token.jwt when the agent was given no token', async () => {
  await withDir(async (dir) => {
    assert.equal(loadIntroToken(dir, undefined), undefined);
    await writeFile(join(dir, 'intro_token.jwt'), 'file.token.value\n', { mode: 0o600 });
    assert.equal(loadIntroToken(dir, undefined), 'file.token.value');
    assert.equal(loadIntroToken(dir, 'given.token.value'), 'given.token.value');
  });
});
