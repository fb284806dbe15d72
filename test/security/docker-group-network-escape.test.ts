/**
 * A docker task of a group network (bridge, none, cni/*) trying to leave it (issue 29): its own
 * `network_mode` — the host's network, docker's bridge, another container's namespace — would
 * put it outside the allocation's namespace, past the isolation the group network gives (the
 * agent's loopback API, the host's other services). Each is refused naming the option before
 * anything reaches the engine; so are the options Docker cannot honour inside another
 * container's network. The same config outside a group network still passes (it is Nomad's).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { parseDockerPluginConfig } from '../../src/drivers/docker/plugin-config.js';
import { parseDockerTask } from '../../src/drivers/docker/task-config.js';
import { DriverError, type NetworkIsolation } from '../../src/drivers/driver.js';
import { mockTaskConfig, tempRoot } from '../drivers/task-config.js';

const PAUSE_ID = 'a'.repeat(64);
const ISOLATION: NetworkIsolation = { path: '/var/run/netns/x', address: '172.26.64.2', sandboxId: PAUSE_ID };

const ESCAPES: Array<[string, Record<string, unknown>, string]> = [
  ['the host network', { network_mode: 'host' }, 'network_mode'],
  ['docker\'s bridge', { network_mode: 'bridge' }, 'network_mode'],
  ['another container\'s network', { network_mode: 'container:web-0b7c2d4e' }, 'network_mode'],
  ['a user-defined docker network', { network_mode: 'backend' }, 'network_mode'],
  ['no network at all (the group network is the mode)', { network_mode: 'none' }, 'network_mode'],
  ['a hostname of its own', { hostname: 'elsewhere' }, 'hostname'],
  ['its own DNS servers', { dns_servers: ['10.9.9.9'] }, 'dns_servers'],
  ['extra hosts entries', { extra_hosts: ['api:127.0.0.1'] }, 'extra_hosts'],
  ['a MAC address', { mac_address: '02:42:ac:11:00:02' }, 'mac_address'],
  ['a net sysctl in the shared namespace', { sysctl: [{ 'net.ipv4.ip_forward': '1' }] }, 'sysctl.net.ipv4.ip_forward'],
];

describe('a docker task in a group network cannot leave it', () => {
  const root = tempRoot('caravan-docker-gn-');
  const plugin = parseDockerPluginConfig({});
  for (const [what, config, field] of ESCAPES) {
    it(`refuses ${what}, naming "${field}"`, () => {
      const cfg = mockTaskConfig(root, { image: 'busybox', ...config }, { networkMode: 'bridge', networkIsolation: ISOLATION });
      assert.throws(() => parseDockerTask(cfg, plugin), (e: unknown) => {
        assert.ok(e instanceof DriverError, String(e));
        assert.ok(e.message.includes(`"${field}"`), `${e.message} names ${field}`);
        assert.equal(e.recoverable, false);
        return true;
      });
    });
  }

  it('joins the pause container, with no docker port publishing, and the group\'s resolv.conf and hosts mounted read-only', () => {
    const cfg = mockTaskConfig(root, { image: 'busybox', ports: ['http'] }, {
      networkMode: 'bridge',
      networkIsolation: { ...ISOLATION, resolvConf: '/data/network/x/resolv.conf', hostsFile: '/data/network/x/hosts' },
    });
    const hc = parseDockerTask(cfg, plugin).create['HostConfig'] as Record<string, unknown>;
    assert.equal(hc['NetworkMode'], `container:${PAUSE_ID}`);
    assert.deepEqual(hc['PortBindings'], {});
    const mounts = hc['Mounts'] as Array<Record<string, unknown>>;
    assert.ok(mounts.some((m) => m['Target'] === '/etc/resolv.conf' && m['Source'] === '/data/network/x/resolv.conf' && m['ReadOnly'] === true));
    assert.ok(mounts.some((m) => m['Target'] === '/etc/hosts' && m['Source'] === '/data/network/x/hosts' && m['ReadOnly'] === true));
  });

  it('outside a group network network_mode = "host" is still Nomad\'s option', () => {
    const hc = parseDockerTask(mockTaskConfig(root, { image: 'busybox', network_mode: 'host' }), plugin).create['HostConfig'] as Record<string, unknown>;
    assert.equal(hc['NetworkMode'], 'host');
  });

  it('cleans up', () => rmSync(root, { recursive: true, force: true }));
});
