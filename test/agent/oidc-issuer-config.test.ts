/**
 * The server's `oidc_issuer` (Nomad's name): read from a configuration file, absent by default,
 * and refused naming the field when it is not an http(s) URL.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentConfigError } from '../../src/agent/agent-config.js';
import { buildAgentConfig } from '../../src/cli/commands/agent.js';

async function withFile(text: string, fn: (file: string, dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-oidc-cfg-'));
  try {
    const file = join(dir, 'a.hcl');
    await writeFile(file, text);
    await fn(file, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('server { oidc_issuer } is read; absent by default', async () => {
  assert.equal((await buildAgentConfig({ dev: true })).server.oidcIssuer, undefined);
  await withFile('server {\n  enabled = true\n  oidc_issuer = "https://nomad.example.com"\n}\n', async (file, dir) => {
    assert.equal((await buildAgentConfig({ config: [file], dataDir: dir })).server.oidcIssuer, 'https://nomad.example.com');
  });
});

test('an oidc_issuer that is not an http(s) URL is refused naming the field', async () => {
  for (const bad of ['"nomad.example.com"', '42']) {
    await withFile(`server {\n  enabled = true\n  oidc_issuer = ${bad}\n}\n`, async (file, dir) => {
      await assert.rejects(buildAgentConfig({ config: [file], dataDir: dir }), (e: unknown) => e instanceof AgentConfigError && /server\.oidc_issuer/.test(e.message));
    });
  }
});
