import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentConfigError } from '../../src/agent/agent-config.js';
import { buildAgentConfig } from '../../src/cli/commands/agent.js';
import { parseDockerPluginConfig } from '../../src/drivers/docker/plugin-config.js';

test('-dev: both roles on loopback 4646 with a temporary data dir', async () => {
  const c = await buildAgentConfig({ dev: true });
  assert.equal(c.server.enabled, true);
  assert.equal(c.client.enabled, true);
  assert.equal(c.bindAddr, '127.0.0.1');
  assert.equal(c.ports.http, 4646);
  assert.equal(c.dataDir, undefined);
});

test('config files then flags, later wins; meta and options merge', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const a = join(dir, 'a.hcl');
    const b = join(dir, 'b.json');
    await writeFile(a, 'data_dir = "/var/a"\nregion = "eu"\nports {\n  http = 5000\n}\nclient {\n  enabled = true\n  servers = ["10.0.0.1:4646"]\n  meta {\n    rack = "r1"\n  }\n}\n');
    await writeFile(b, JSON.stringify({ datacenter: 'dc9', client: { meta: { zone: 'z' }, node_class: 'big' } }));
    const c = await buildAgentConfig({ config: [a, b], httpPort: '6000', dc: 'dc2' });
    assert.equal(c.dataDir, '/var/a');
    assert.equal(c.region, 'eu');
    assert.equal(c.ports.http, 6000);
    assert.equal(c.datacenter, 'dc2');
    assert.deepEqual(c.client.servers, ['10.0.0.1:4646']);
    assert.deepEqual(c.client.meta, { rack: 'r1', zone: 'z' });
    assert.equal(c.client.nodeClass, 'big');
    assert.deepEqual(c.files, [a, b]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('bad configurations name the field', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const bad = join(dir, 'bad.hcl');
    await writeFile(bad, 'ports {\n  http = "abc"\n}\n');
    const rows = [
      { name: 'no role', flags: { dataDir: '/x' }, field: 'server.enabled' },
      { name: 'no data dir', flags: { server: true }, field: 'data_dir' },
      { name: 'client without servers', flags: { client: true, dataDir: '/x' }, field: 'client.servers' },
      { name: 'bad port flag', flags: { dev: true, httpPort: 'x' }, field: '-http-port' },
      { name: 'bad port in file', flags: { dev: true, config: [bad] }, field: 'ports.http' },
      { name: 'missing file', flags: { dev: true, config: [join(dir, 'nope.hcl')] }, field: 'config' },
      { name: 'bad log level', flags: { dev: true, logLevel: 'loud' }, field: 'log_level' },
    ];
    for (const r of rows) {
      await assert.rejects(buildAgentConfig(r.flags), (err: unknown) => err instanceof AgentConfigError && err.field === r.field, r.name);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('plugin "docker" { config { … } } is kept for the driver and read as Nomad reads it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const f = join(dir, 'docker.hcl');
    await writeFile(f, 'plugin "docker" {\n  config {\n    endpoint = "unix:///tmp/x.sock"\n    allow_runtimes = ["runc", "runsc"]\n    volumes {\n      enabled = true\n    }\n    gc {\n      image_delay = "10s"\n    }\n  }\n}\n');
    const c = await buildAgentConfig({ dev: true, config: [f] });
    const docker = c.plugins['docker'];
    assert.ok(docker);
    const parsed = parseDockerPluginConfig(docker);
    assert.equal(parsed.endpoint, 'unix:///tmp/x.sock');
    assert.deepEqual(parsed.allowRuntimes, ['runc', 'runsc']);
    assert.equal(parsed.volumesEnabled, true);
    assert.equal(parsed.gc.imageDelayMs, 10_000);
    assert.equal(parsed.gc.container, true);
    assert.equal(parsed.allowPrivileged, false);
    assert.throws(() => parseDockerPluginConfig({ allow_privileged: 'yes' }), /"allow_privileged"/);
    assert.throws(() => parseDockerPluginConfig({ bogus: 1 }), /"plugin\.docker\.config\.bogus"/);
    assert.throws(() => parseDockerPluginConfig({ gc: [{ image_delay: 'soon' }] }), /"gc\.image_delay"/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('safe defaults: a non-dev agent binds to loopback and leaves raw_exec off; -dev enables it', async () => {
  const plain = await buildAgentConfig({ server: true, dataDir: '/var/x' });
  assert.equal(plain.bindAddr, '127.0.0.1');
  assert.equal(plain.plugins['raw_exec'], undefined);
  const dev = await buildAgentConfig({ dev: true });
  assert.deepEqual(dev.plugins['raw_exec'], { enabled: true });
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const on = join(dir, 'on.hcl');
    await writeFile(on, 'bind_addr = "0.0.0.0"\nplugin "raw_exec" {\n  config {\n    enabled = true\n  }\n}\n');
    const c = await buildAgentConfig({ server: true, dataDir: '/var/x', config: [on] });
    assert.equal(c.bindAddr, '0.0.0.0');
    assert.deepEqual(c.plugins['raw_exec'], { enabled: true });
    // A -dev agent whose file turns raw_exec off has it off.
    const off = join(dir, 'off.hcl');
    await writeFile(off, 'plugin "raw_exec" {\n  config {\n    enabled = false\n  }\n}\n');
    assert.deepEqual((await buildAgentConfig({ dev: true, config: [off] })).plugins['raw_exec'], { enabled: false });
    const bad = join(dir, 'bad.hcl');
    await writeFile(bad, 'plugin "raw_exec" {\n  config {\n    enabled = "yes"\n  }\n}\n');
    await assert.rejects(buildAgentConfig({ server: true, dataDir: '/var/x', config: [bad] }), (err: unknown) => err instanceof AgentConfigError && err.field === 'plugin.raw_exec.config.enabled');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
