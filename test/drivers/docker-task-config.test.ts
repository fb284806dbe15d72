/** The docker task config → container-create body, without an engine. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { defaultInfraImage, parseDockerPluginConfig } from '../../src/drivers/docker/plugin-config.js';
import { parseDockerTask, splitImage } from '../../src/drivers/docker/task-config.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

type Obj = Record<string, unknown>;

test('docker task config: ports, resources, env and mounts become the create body', () => {
  const root = tempRoot('caravan-docker-cfg-');
  try {
    const cfg = mockTaskConfig(
      root,
      { image: 'redis:7', command: 'redis-server', args: ['--port', '6379'], ports: ['db'], port_map: [{ admin: 9000 }], cpu_hard_limit: true, labels: [{ team: 'x' }], ulimit: [{ nofile: '100:200' }] },
      {
        env: { NOMAD_HOST_PORT_db: '23456', NOMAD_PORT_db: '6379', NOMAD_HOST_IP_db: '127.0.0.1', NOMAD_HOST_PORT_admin: '23457', NOMAD_HOST_IP_admin: '127.0.0.1', NOMAD_ALLOC_DIR: '/host/alloc' },
        resources: { cpuShares: 500, memoryMB: 128, memoryMaxMB: 256 },
      },
    );
    const t = parseDockerTask(cfg, parseDockerPluginConfig({}));
    const hc = t.create.HostConfig as Obj;
    assert.deepEqual(t.create.Cmd, ['redis-server', '--port', '6379']);
    assert.deepEqual(hc.PortBindings, {
      '6379/tcp': [{ HostIp: '127.0.0.1', HostPort: '23456' }],
      '6379/udp': [{ HostIp: '127.0.0.1', HostPort: '23456' }],
      '9000/tcp': [{ HostIp: '127.0.0.1', HostPort: '23457' }],
      '9000/udp': [{ HostIp: '127.0.0.1', HostPort: '23457' }],
    });
    assert.deepEqual(Object.keys(t.create.ExposedPorts as Obj).sort(), ['6379/tcp', '6379/udp', '9000/tcp', '9000/udp']);
    assert.equal(hc.Memory, 256 * 1024 * 1024, 'memory_max is the hard limit');
    assert.equal(hc.MemoryReservation, 128 * 1024 * 1024, 'memory is the reservation under it');
    assert.equal(hc.CpuShares, 500);
    assert.equal(hc.CpuPeriod, 100_000);
    assert.ok((hc.CpuQuota as number) > 0);
    assert.deepEqual(hc.Ulimits, [{ Name: 'nofile', Soft: 100, Hard: 200 }]);
    assert.deepEqual((hc.Binds as string[]).slice(0, 3), [`${cfg.dirs.sharedAllocDir}:/alloc`, `${cfg.dirs.localDir}:/local`, `${cfg.dirs.secretsDir}:/secrets`]);
    const env = t.create.Env as string[];
    assert.ok(env.includes('NOMAD_ALLOC_DIR=/alloc') && env.includes('NOMAD_TASK_DIR=/local') && env.includes('NOMAD_SECRETS_DIR=/secrets'));
    const labels = t.create.Labels as Record<string, string>;
    assert.equal(labels['team'], 'x');
    assert.equal(labels['com.hashicorp.nomad.alloc_id'], cfg.allocId);
    assert.equal(labels['com.hashicorp.nomad.task_name'], cfg.taskName);
    assert.deepEqual(hc.LogConfig, { Type: 'json-file', Config: {} });

    // A relative volume lives in the task dir; leaving the alloc dir needs volumes enabled.
    const rel = parseDockerTask(mockTaskConfig(root, { image: 'x', volumes: ['data:/data:ro'] }), parseDockerPluginConfig({}));
    assert.match(((rel.create.HostConfig as Obj).Binds as string[])[3]!, /\/web\/data:\/data:ro$/);
    assert.throws(() => parseDockerTask(mockTaskConfig(root, { image: 'x', volumes: ['../../../etc:/e'] }), parseDockerPluginConfig({})), /"volumes\[0\]".*leaves the allocation directory/);
    assert.throws(() => parseDockerTask(mockTaskConfig(root, { image: 'x', mount: [{ type: 'volume', target: '/v', source: 'named' }] }), parseDockerPluginConfig({})), /"mount\[0\]\.type"/);
    assert.throws(() => parseDockerTask(mockTaskConfig(root, { image: 'x', tty: true }), parseDockerPluginConfig({})), /"tty"/);
    assert.throws(() => parseDockerTask(mockTaskConfig(root, { image: 'x', logging: [{ type: 'syslog' }] }), parseDockerPluginConfig({})), /"logging\.type"/);
    assert.throws(() => parseDockerTask(mockTaskConfig(root, { image: 'x', cap_add: ['all'] }), parseDockerPluginConfig({})), /"cap_add\[0\]"/);
    const caps = parseDockerTask(mockTaskConfig(root, { image: 'x', cap_add: ['CAP_CHOWN'], cap_drop: ['all'] }), parseDockerPluginConfig({}));
    assert.deepEqual([(caps.create.HostConfig as Obj).CapAdd, (caps.create.HostConfig as Obj).CapDrop], [['CAP_CHOWN'], ['ALL']]);
    const tmpfs = parseDockerTask(mockTaskConfig(root, { image: 'x', mount: [{ type: 'tmpfs', target: '/scratch', tmpfs_options: [{ size: 1024 }] }] }), parseDockerPluginConfig({}));
    assert.deepEqual((tmpfs.create.HostConfig as Obj).Mounts, [{ Type: 'tmpfs', Target: '/scratch', ReadOnly: false, TmpfsOptions: { SizeBytes: 1024 } }]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker image names: tag defaults to latest, a registry port is not a tag', () => {
  assert.deepEqual(splitImage('busybox'), { repo: 'busybox', tag: 'latest' });
  assert.deepEqual(splitImage('busybox:1.36'), { repo: 'busybox', tag: '1.36' });
  assert.deepEqual(splitImage('registry:5000/team/app'), { repo: 'registry:5000/team/app', tag: 'latest' });
  assert.deepEqual(splitImage('registry:5000/team/app:v2'), { repo: 'registry:5000/team/app', tag: 'v2' });
  assert.deepEqual(splitImage('app@sha256:abc'), { repo: 'app@sha256:abc', tag: '' });
});

test('docker task config: host volume mounts become bind mounts, without needing volumes enabled', () => {
  const root = tempRoot('caravan-docker-hv-');
  try {
    const cfg = mockTaskConfig(root, { image: 'x' }, {
      mounts: [
        { hostPath: '/srv/db', taskPath: '/var/lib/db', readOnly: false, propagationMode: 'private' },
        { hostPath: '/srv/certs', taskPath: '/certs', readOnly: true, propagationMode: 'host-to-task' },
      ],
    });
    const hc = parseDockerTask(cfg, parseDockerPluginConfig({})).create.HostConfig as Obj;
    assert.deepEqual(hc.Mounts, [
      { Type: 'bind', Source: '/srv/db', Target: '/var/lib/db', ReadOnly: false, BindOptions: { Propagation: 'rprivate' } },
      { Type: 'bind', Source: '/srv/certs', Target: '/certs', ReadOnly: true, BindOptions: { Propagation: 'rslave' } },
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('docker plugin config: infra_image defaults to Nomad\'s pause image, infra_image_pull_timeout to 5m; bad values name the option', () => {
  const d = parseDockerPluginConfig({});
  assert.match(d.infraImage, /^registry\.k8s\.io\/pause-[a-z0-9]+:3\.3$/);
  assert.equal(defaultInfraImage('x64'), 'registry.k8s.io/pause-amd64:3.3');
  assert.equal(defaultInfraImage('arm64'), 'registry.k8s.io/pause-arm64:3.3');
  assert.equal(d.infraImagePullTimeoutMs, 5 * 60_000);
  const c = parseDockerPluginConfig({ infra_image: 'my/pause:1', infra_image_pull_timeout: '30s' });
  assert.equal(c.infraImage, 'my/pause:1');
  assert.equal(c.infraImagePullTimeoutMs, 30_000);
  assert.throws(() => parseDockerPluginConfig({ infra_image: '' }), /"infra_image"/);
  assert.throws(() => parseDockerPluginConfig({ infra_image_pull_timeout: 'soon' }), /"infra_image_pull_timeout"/);
});
