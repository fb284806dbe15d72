/**
 * The group network configurator against the real kernel and CNI plugins: set-up of a bridge
 * and a none network, idempotent teardown, and the sweep a starting agent runs over what dead
 * allocations left (namespace, veth, iptables rules). Also the pure parts (conflist, port
 * mappings, resolv.conf). Needs root and the CNI plugins for the first part: it fails saying so.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Allocation } from '../../../src/structs/index.js';
import { AllocNetworkConfigurator, allocPortMappings, clientNetworkConfig } from '../../../src/client/network/alloc-network-configurator.js';
import { bridgeConflist, parseConflist } from '../../../src/client/network/cni-conflist.js';
import { resolvConfText } from '../../../src/client/network/resolv-conf.js';
import { hasErrorCode } from '../../../src/structs/caravan-error.js';
import { bridgePorts, CNI_PLUGIN_DIR, netnsNames, removeTestBridge, requireGroupNetworking, rulesMentioning, testBridge, type TestBridge } from '../../integration/helpers/group-network.js';

function fakeAlloc(mode: string, ports: { Label: string; Value: number; To: number }[] = []): Allocation {
  return {
    ID: randomUUID(),
    TaskGroup: 'g',
    Job: { TaskGroups: [{ Name: 'g', Networks: [{ Mode: mode, DNS: null, Hostname: '' }] }] },
    AllocatedResources: { Tasks: {}, TaskLifecycles: {}, Shared: { Networks: null, DiskMB: 0, Ports: ports.map((p) => ({ ...p, HostIP: '127.0.0.1' })) } },
  } as unknown as Allocation;
}

test('bridge conflist is Nomad\'s: loopback, bridge with host-local, firewall with NOMAD-ADMIN, portmap with snat', () => {
  const l = bridgeConflist({ bridgeName: 'nomad', subnet: '172.26.64.0/20', hairpinMode: false, adminChain: 'NOMAD-ADMIN' });
  assert.equal(l.cniVersion, '0.4.0');
  assert.deepEqual(l.plugins.map((p) => p['type']), ['loopback', 'bridge', 'firewall', 'portmap']);
  assert.equal(l.plugins[1]!['bridge'], 'nomad');
  assert.equal(l.plugins[1]!['ipMasq'], true);
  assert.deepEqual((l.plugins[1]!['ipam'] as { ranges: unknown }).ranges, [[{ subnet: '172.26.64.0/20' }]]);
  assert.equal(l.plugins[2]!['iptablesAdminChainName'], 'NOMAD-ADMIN');
  assert.deepEqual(l.plugins[3]!['capabilities'], { portMappings: true });
});

test('a single-plugin conf becomes a list of one; a conflist without name or types is refused', () => {
  assert.deepEqual(parseConflist({ cniVersion: '1.0.0', name: 'n', type: 'ptp', ipMasq: true }, 'f'), { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'ptp', ipMasq: true }] });
  assert.throws(() => parseConflist({ plugins: [{ type: 'x' }] }, 'f'), /"name"/);
  assert.throws(() => parseConflist({ name: 'n', plugins: [{}] }, 'f'), /plugins\[0\]/);
});

test('port mappings: host port to `to` (the host port when `to` is unset), TCP and UDP', () => {
  const m = allocPortMappings(fakeAlloc('bridge', [{ Label: 'a', Value: 25000, To: 8080 }, { Label: 'b', Value: 25001, To: 0 }]));
  assert.deepEqual(m, [
    { hostPort: 25000, containerPort: 8080, protocol: 'tcp' },
    { hostPort: 25000, containerPort: 8080, protocol: 'udp' },
    { hostPort: 25001, containerPort: 25001, protocol: 'tcp' },
    { hostPort: 25001, containerPort: 25001, protocol: 'udp' },
  ]);
});

test('resolv.conf from the dns block', () => {
  assert.equal(resolvConfText({ Servers: ['1.1.1.1', '8.8.8.8'], Searches: ['a.test'], Options: ['ndots:2'] }), 'nameserver 1.1.1.1\nnameserver 8.8.8.8\nsearch a.test\noptions ndots:2\n');
});

let bridge: TestBridge;
let stateDir: string;
let setupError: Error | null = null;

before(async () => {
  try {
    requireGroupNetworking();
  } catch (err) {
    setupError = err as Error;
    return;
  }
  bridge = testBridge();
  stateDir = await mkdtemp(join(tmpdir(), 'cv-netcfg-'));
});

after(async () => {
  if (setupError) return;
  removeTestBridge(bridge);
  await rm(stateDir, { recursive: true, force: true });
});

function configurator(): AllocNetworkConfigurator {
  if (setupError) throw setupError;
  return new AllocNetworkConfigurator(clientNetworkConfig({ bridgeName: bridge.name, bridgeSubnet: bridge.subnet, cniPath: [CNI_PLUGIN_DIR] }), stateDir);
}

test('an unknown mode or CNI network is a configuration error naming the mode', async () => {
  const c = configurator();
  for (const mode of ['overlay', 'cni/absent']) {
    const alloc = fakeAlloc(mode);
    await assert.rejects(c.setup(alloc), (err: unknown) => hasErrorCode(err, 'CLIENT_NETWORK_CONFIG') && (err as Error).message.includes(mode));
    assert.ok(!netnsNames().includes(alloc.ID), 'nothing is left of a refused set-up');
  }
});

test('bridge and none set-ups, then teardown, leave nothing behind', async () => {
  const c = configurator();
  const b = fakeAlloc('bridge', [{ Label: 'http', Value: 29991, To: 8080 }]);
  const n = fakeAlloc('none');
  const bn = await c.setup(b);
  const nn = await c.setup(n);
  assert.ok(bn?.address.startsWith(bridge.subnet.replace('0/24', '')), JSON.stringify(bn));
  assert.equal(nn?.address, '');
  assert.deepEqual(await c.setup(b), bn, 'a second set-up answers the same network');
  assert.ok(netnsNames().includes(b.ID) && netnsNames().includes(n.ID));
  assert.ok(rulesMentioning(b.ID).length > 0);
  await c.teardown(b.ID);
  await c.teardown(n.ID);
  await c.teardown(n.ID);
  assert.ok(!netnsNames().includes(b.ID) && !netnsNames().includes(n.ID));
  assert.deepEqual(rulesMentioning(b.ID), []);
  assert.deepEqual(rulesMentioning(`${bn!.address}/32`), []);
  assert.deepEqual(bridgePorts(bridge), []);
});

test('a starting agent sweeps the networks of allocations it no longer holds, and keeps the others', async () => {
  const dead = fakeAlloc('bridge', [{ Label: 'http', Value: 29992, To: 80 }]);
  const live = fakeAlloc('bridge');
  const first = configurator();
  await first.setup(dead);
  const liveNet = await first.setup(live);
  // A new agent process (a new configurator over the same state dir).
  const second = configurator();
  assert.deepEqual(await second.sweep(new Set([live.ID])), [dead.ID]);
  assert.ok(!netnsNames().includes(dead.ID));
  assert.deepEqual(rulesMentioning(dead.ID), []);
  assert.deepEqual(await second.restore(live.ID), liveNet);
  assert.equal(bridgePorts(bridge).length, 1);
  await second.teardown(live.ID);
  assert.equal(await second.restore(live.ID), null);
  assert.deepEqual(bridgePorts(bridge), []);
});
