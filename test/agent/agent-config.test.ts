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

test('the mock driver is off in a non-dev agent, on with -dev, and a file can set it either way', async () => {
  assert.equal((await buildAgentConfig({ server: true, client: true, dataDir: '/var/x' })).plugins['mock_driver'], undefined);
  assert.deepEqual((await buildAgentConfig({ dev: true })).plugins['mock_driver'], { enabled: true });
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const block = (v: string) => `plugin "mock_driver" {\n  config {\n    enabled = ${v}\n  }\n}\n`;
    const on = join(dir, 'on.hcl');
    await writeFile(on, block('true'));
    assert.deepEqual((await buildAgentConfig({ client: true, servers: '127.0.0.1:4647', dataDir: '/var/x', config: [on] })).plugins['mock_driver'], { enabled: true });
    const off = join(dir, 'off.hcl');
    await writeFile(off, block('false'));
    assert.deepEqual((await buildAgentConfig({ dev: true, config: [off] })).plugins['mock_driver'], { enabled: false });
    const bad = join(dir, 'bad.hcl');
    await writeFile(bad, block('"yes"'));
    await assert.rejects(buildAgentConfig({ server: true, dataDir: '/var/x', config: [bad] }), (err: unknown) => err instanceof AgentConfigError && err.field === 'plugin.mock_driver.config.enabled');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('client { options = { "env.denylist" = … } }: a list of names is kept; one that is no variable name refuses the agent, naming the option', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const file = async (name: string, list: string) => {
      const f = join(dir, name);
      await writeFile(f, `client {\n  options = {\n    "env.denylist" = ${JSON.stringify(list)}\n  }\n}\n`);
      return f;
    };
    const good = await buildAgentConfig({ dev: true, config: [await file('good.hcl', 'SITE_SECRET,VAULT_TOKEN')] });
    assert.equal(good.client.options['env.denylist'], 'SITE_SECRET,VAULT_TOKEN');
    await assert.rejects(
      buildAgentConfig({ dev: true, config: [await file('bad.hcl', 'SITE_SECRET VAULT_TOKEN')] }),
      (err: unknown) => err instanceof AgentConfigError && err.field === 'client.options["env.denylist"]' && err.message.includes('"SITE_SECRET VAULT_TOKEN"'),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('server { etcd { … } } and -etcd-endpoints: the log on etcd; -dev and a plain server keep the embedded log', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const file = join(dir, 'server.hcl');
    await writeFile(
      file,
      [
        'data_dir = "/var/caravan"',
        'server {',
        '  enabled = true',
        '  etcd {',
        '    endpoints = ["https://10.0.0.1:2379", "https://10.0.0.2:2379"]',
        '    prefix = "/prod/"',
        '    lease_ttl = "3s"',
        '    tls {',
        '      ca_file = "/etc/etcd/ca.pem"',
        '      cert_file = "/etc/etcd/client.pem"',
        '      key_file = "/etc/etcd/client-key.pem"',
        '    }',
        '  }',
        '}',
      ].join('\n'),
    );
    const c = await buildAgentConfig({ config: [file] });
    assert.deepEqual(c.server.etcd, {
      endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
      prefix: '/prod/',
      leaseTtlSeconds: 3,
      tls: { caFile: '/etc/etcd/ca.pem', certFile: '/etc/etcd/client.pem', keyFile: '/etc/etcd/client-key.pem' },
    });
    // The flag replaces the endpoints and keeps the file's other settings.
    const f = await buildAgentConfig({ config: [file], etcdEndpoints: 'https://10.0.0.9:2379' });
    assert.deepEqual(f.server.etcd?.endpoints, ['https://10.0.0.9:2379']);
    assert.equal(f.server.etcd?.prefix, '/prod/');
    const flagsOnly = await buildAgentConfig({ server: true, dataDir: '/x', etcdEndpoints: 'http://127.0.0.1:2379,http://127.0.0.2:2379' });
    assert.deepEqual(flagsOnly.server.etcd, { endpoints: ['http://127.0.0.1:2379', 'http://127.0.0.2:2379'] });
    assert.equal((await buildAgentConfig({ dev: true })).server.etcd, undefined);
    assert.equal((await buildAgentConfig({ server: true, dataDir: '/x' })).server.etcd, undefined);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('bad etcd settings name the field', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const write = async (name: string, etcd: string): Promise<string> => {
      const p = join(dir, name);
      await writeFile(p, `data_dir = "/x"\nserver {\n  enabled = true\n  etcd {\n${etcd}\n  }\n}\n`);
      return p;
    };
    const rows = [
      { name: 'no endpoints', flags: { config: [await write('a.hcl', 'prefix = "/p/"')] }, field: 'server.etcd.endpoints' },
      { name: 'endpoints not a list', flags: { config: [await write('b.hcl', 'endpoints = "http://a:2379"')] }, field: 'server.etcd.endpoints' },
      { name: 'endpoint without scheme', flags: { server: true, dataDir: '/x', etcdEndpoints: '10.0.0.1:2379' }, field: 'server.etcd.endpoints' },
      { name: 'relative prefix', flags: { server: true, dataDir: '/x', etcdEndpoints: 'http://a:2379', etcdPrefix: 'caravan' }, field: 'server.etcd.prefix' },
      { name: 'bad lease ttl', flags: { config: [await write('c.hcl', 'endpoints = ["http://a:2379"]\nlease_ttl = "soon"')] }, field: 'server.etcd.lease_ttl' },
      { name: 'cert without key', flags: { config: [await write('d.hcl', 'endpoints = ["https://a:2379"]\ntls {\n ca_file = "/ca"\n cert_file = "/c"\n}')] }, field: 'server.etcd.tls' },
      { name: 'etcd with -dev', flags: { dev: true, etcdEndpoints: 'http://a:2379' }, field: 'server.etcd' },
    ];
    for (const r of rows) {
      await assert.rejects(buildAgentConfig(r.flags), (err: unknown) => err instanceof AgentConfigError && err.field === r.field, r.name);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the acl block: enabled and the TTLs (Go durations); ACLs are off by default', async () => {
  assert.deepEqual((await buildAgentConfig({ dev: true })).acl, { enabled: false, tokenTtlMs: 30_000, policyTtlMs: 30_000 });
  const dir = await mkdtemp(join(tmpdir(), 'caravan-acl-cfg-'));
  try {
    const f = join(dir, 'acl.hcl');
    await writeFile(f, 'acl {\n  enabled = true\n  token_ttl = "5s"\n  policy_ttl = "1m"\n}\n');
    assert.deepEqual((await buildAgentConfig({ dev: true, config: [f] })).acl, { enabled: true, tokenTtlMs: 5_000, policyTtlMs: 60_000 });
    await writeFile(f, 'acl {\n  token_ttl = "soon"\n}\n');
    await assert.rejects(buildAgentConfig({ dev: true, config: [f] }), (err: unknown) => err instanceof AgentConfigError && err.field === 'acl.token_ttl');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the tls block: parsed from HCL, combinations and unreadable files named by field', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const ok = join(dir, 'tls.hcl');
    await writeFile(ok, 'tls {\n  http = true\n  rpc = true\n  ca_file = "/c/ca.pem"\n  cert_file = "/c/a.pem"\n  key_file = "/c/a-key.pem"\n  verify_server_hostname = true\n  verify_https_client = false\n}\n');
    const c = await buildAgentConfig({ server: true, dataDir: '/var/x', config: [ok] });
    assert.deepEqual(c.tls, { http: true, rpc: true, caFile: '/c/ca.pem', certFile: '/c/a.pem', keyFile: '/c/a-key.pem', verifyServerHostname: true, verifyHttpsClient: false });
    for (const [body, field] of [
      ['tls {\n  http = true\n  key_file = "/k"\n}\n', 'tls.cert_file'],
      ['tls {\n  http = true\n  cert_file = "/c"\n}\n', 'tls.key_file'],
      ['tls {\n  rpc = true\n}\n', 'tls.rpc'],
      ['tls {\n  http = true\n  cert_file = "/c"\n  key_file = "/k"\n  verify_https_client = true\n}\n', 'tls.ca_file'],
      ['tls {\n  http = "yes"\n}\n', 'tls.http'],
    ] as const) {
      const f = join(dir, 'bad.hcl');
      await writeFile(f, body);
      await assert.rejects(buildAgentConfig({ server: true, dataDir: '/var/x', config: [f] }), (err: unknown) => (err as { field?: string }).field === field, body);
    }
    // Files are read when the agent starts: a missing one is named.
    const { loadAgentTls } = await import('../../src/tls/tls-config.js');
    assert.throws(() => loadAgentTls(c.tls, 'global'), (err: unknown) => (err as { field?: string }).field === 'tls.cert_file' && /cannot read \/c\/a\.pem/.test((err as Error).message));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('server { job_max_count, job_max_priority, job_default_priority }: read, defaulted, and checked as Nomad checks them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const file = async (body: string): Promise<string> => {
      const f = join(dir, `${Math.random().toString(36).slice(2)}.hcl`);
      await writeFile(f, body);
      return f;
    };
    const set = await buildAgentConfig({ dev: true, config: [await file('server {\n  job_max_count = 2000000\n  job_max_priority = 200\n  job_default_priority = 70\n}\n')] });
    assert.equal(set.server.jobMaxCount, 2_000_000);
    assert.equal(set.server.jobMaxPriority, 200);
    assert.equal(set.server.jobDefaultPriority, 70);
    const unset = await buildAgentConfig({ dev: true });
    assert.equal(unset.server.jobMaxCount, undefined, "absent: the server's default (50,000)");
    const noLimit = await buildAgentConfig({ dev: true, config: [await file('server {\n  job_max_count = 0\n}\n')] });
    assert.equal(noLimit.server.jobMaxCount, 0, '0 means no limit');
    const rows = [
      { body: 'server {\n  job_max_count = -1\n}\n', field: 'server.job_max_count', message: /non-negative/ },
      { body: 'server {\n  job_max_count = "many"\n}\n', field: 'server.job_max_count', message: /integer/ },
      { body: 'server {\n  job_max_priority = 99\n}\n', field: 'server.job_max_priority', message: /job_max_priority cannot be 99. Must be between 100 and 32766/ },
      { body: 'server {\n  job_max_priority = 32767\n}\n', field: 'server.job_max_priority', message: /cannot be 32767/ },
      { body: 'server {\n  job_default_priority = 49\n}\n', field: 'server.job_default_priority', message: /job_default_priority cannot be 49. Must be between 50 and 100/ },
      { body: 'server {\n  job_default_priority = 100\n}\n', field: 'server.job_default_priority', message: /cannot be 100/ },
    ];
    for (const r of rows) {
      const f = await file(r.body);
      await assert.rejects(buildAgentConfig({ dev: true, config: [f] }), (err: unknown) => err instanceof AgentConfigError && err.field === r.field && r.message.test(err.message), r.body);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('client group networking options, as Nomad names them; bad values name the field', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-cfg-'));
  try {
    const f = join(dir, 'net.hcl');
    await writeFile(f, 'client {\n  bridge_network_name = "br-test"\n  bridge_network_subnet = "10.99.0.0/24"\n  bridge_network_hairpin_mode = true\n  cni_path = "/opt/cni/bin:/usr/lib/cni"\n  cni_config_dir = "/etc/cni/net.d"\n}\n');
    const c = await buildAgentConfig({ dev: true, config: [f] });
    assert.deepEqual(c.client.network, { bridgeName: 'br-test', bridgeSubnet: '10.99.0.0/24', hairpinMode: true, cniPath: ['/opt/cni/bin', '/usr/lib/cni'], cniConfigDir: '/etc/cni/net.d' });
    assert.equal((await buildAgentConfig({ dev: true })).client.network, undefined, 'unset: the client applies Nomad\'s defaults');
    for (const [body, field] of [
      ['client {\n  bridge_network_name = "a name/with slash"\n}\n', 'client.bridge_network_name'],
      ['client {\n  bridge_network_subnet = "10.0.0.300/24"\n}\n', 'client.bridge_network_subnet'],
      ['client {\n  bridge_network_subnet = "fd00::/64"\n}\n', 'client.bridge_network_subnet'],
      ['client {\n  bridge_network_hairpin_mode = "yes"\n}\n', 'client.bridge_network_hairpin_mode'],
    ] as const) {
      const bad = join(dir, 'bad.hcl');
      await writeFile(bad, body);
      await assert.rejects(buildAgentConfig({ dev: true, config: [bad] }), (err: unknown) => err instanceof AgentConfigError && err.field === field, body);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
