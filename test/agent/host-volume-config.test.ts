/** `client { host_volume "name" { path read_only } }` in agent configuration files. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentConfigError } from '../../src/agent/agent-config.js';
import { buildAgentConfig } from '../../src/cli/commands/agent.js';

async function withFiles(files: Record<string, string>, fn: (paths: string[]) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-hv-cfg-'));
  try {
    const paths: string[] = [];
    for (const [name, text] of Object.entries(files)) {
      const p = join(dir, name);
      await writeFile(p, text);
      paths.push(p);
    }
    await fn(paths);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('host_volume blocks (HCL and JSON) are read by name; later files add and replace', async () => {
  await withFiles(
    {
      'a.hcl': 'client {\n  host_volume "db" {\n    path = "/srv/db"\n  }\n  host_volume "certs" {\n    path      = "/etc/ssl/certs"\n    read_only = true\n  }\n}\n',
      'b.json': JSON.stringify({ client: { host_volume: { db: { path: '/srv/db2' }, 'db[0]': { path: '/srv/db0', read_only: false } } } }),
    },
    async (files) => {
      const c = await buildAgentConfig({ dev: true, config: files });
      assert.deepEqual(c.client.hostVolumes, {
        db: { path: '/srv/db2', readOnly: false },
        certs: { path: '/etc/ssl/certs', readOnly: true },
        'db[0]': { path: '/srv/db0', readOnly: false },
      });
    },
  );
});

test('bad host_volume blocks name the field', async () => {
  const rows: [string, string, string][] = [
    ['relative path', 'client {\n  host_volume "db" {\n    path = "srv/db"\n  }\n}\n', 'client.host_volume "db".path'],
    ['no path', 'client {\n  host_volume "db" {\n    read_only = true\n  }\n}\n', 'client.host_volume "db".path'],
    ['unknown key', 'client {\n  host_volume "db" {\n    path = "/srv"\n    owner = "me"\n  }\n}\n', 'client.host_volume "db".owner'],
    ['read_only not a bool', 'client {\n  host_volume "db" {\n    path = "/srv"\n    read_only = "maybe"\n  }\n}\n', 'client.host_volume "db".read_only'],
  ];
  for (const [name, text, field] of rows) {
    await withFiles({ 'c.hcl': text }, async (files) => {
      await assert.rejects(buildAgentConfig({ dev: true, config: files }), (err: unknown) => {
        assert.ok(err instanceof AgentConfigError, `${name}: ${String(err)}`);
        assert.equal(err.field, field, name);
        return true;
      });
    });
  }
});

test('host_volumes_dir and host_volume_plugin_dir (Nomad\'s dynamic host volume options) are read; relative paths refused naming the option', async () => {
  await withFiles(
    { 'a.hcl': 'client {\n  host_volumes_dir = "/srv/volumes"\n}\n', 'b.hcl': 'client {\n  host_volume_plugin_dir = "/opt/hv"\n}\n' },
    async (files) => {
      const c = await buildAgentConfig({ dev: true, config: files });
      assert.equal(c.client.hostVolumesDir, '/srv/volumes');
      assert.equal(c.client.hostVolumePluginDir, '/opt/hv');
    },
  );
  await withFiles({ 'a.hcl': 'client {\n  host_volumes_dir = "volumes"\n}\n' }, async (files) => {
    await assert.rejects(buildAgentConfig({ dev: true, config: files }), (e) => e instanceof AgentConfigError && /client\.host_volumes_dir/.test(e.message));
  });
});
