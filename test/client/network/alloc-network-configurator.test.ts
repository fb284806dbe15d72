/**
 * The group network configurator against the real kernel and CNI plugins: set-up of a bridge
 * and a none network, idempotent teardown, and the sweep a starting agent runs over what dead
 * allocations left (namespace, veth, iptables rules). Also the pure parts (conflist, port
 * mappings, resolv.conf). Needs root and the CNI plugins for the first part: it fails saying so.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { lstat, mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Allocation } from '../../../src/structs/index.js';
import { AllocNetworkConfigurator, allocPortMappings, clientNetworkConfig } from '../../../src/client/network/alloc-network-configurator.js';
import { bridgeConflist, parseConflist } from '../../../src/client/network/cni-conflist.js';
import { resolvConfText } from '../../../src/client/network/resolv-conf.js';
import { removeHostPortForward } from '../../../src/client/network/host-port-forward.js';
import { aliasNetns, createNetns, deleteNetns } from '../../../src/client/network/net-namespace.js';
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

/** Every configurator made here: closed before the bridge goes, so no refill outlives a failed test. */
const made: AllocNetworkConfigurator[] = [];

after(async () => {
  if (setupError) return;
  await Promise.all(made.map((c) => c.close()));
  removeTestBridge(bridge);
  await rm(stateDir, { recursive: true, force: true });
});

/** A configurator on the test bridge; without warm namespaces unless asked (the tests below count veths). */
function configurator(warmNamespaces = 0): AllocNetworkConfigurator {
  if (setupError) throw setupError;
  const c = new AllocNetworkConfigurator(clientNetworkConfig({ bridgeName: bridge.name, bridgeSubnet: bridge.subnet, cniPath: [CNI_PLUGIN_DIR], warmNamespaces }), stateDir);
  made.push(c);
  return c;
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

test('an agent restart finds the port rules of a running allocation again, and makes them again when they are gone', async () => {
  const a = fakeAlloc('bridge', [{ Label: 'http', Value: 29997, To: 8080 }]);
  const net = await configurator().setup(a);
  const rules = rulesMentioning(`${net!.address}:8080`);
  assert.equal(rules.length, 2, 'TCP and UDP are forwarded');
  // A new agent process.
  const second = configurator();
  assert.deepEqual(await second.restore(a.ID), net);
  assert.deepEqual(rulesMentioning(`${net!.address}:8080`), rules);
  // Rules flushed behind the agent's back (the namespace still runs).
  const mappings = allocPortMappings(a);
  await removeHostPortForward({ network: 'nomad', containerId: a.ID, address: net!.address, subnet: bridge.subnet, mappings });
  assert.deepEqual(rulesMentioning(`${net!.address}:8080`), []);
  assert.deepEqual(await configurator().restore(a.ID), net);
  assert.deepEqual(rulesMentioning(`${net!.address}:8080`), rules);
  await second.teardown(a.ID);
  assert.deepEqual(rulesMentioning(`${net!.address}:`), []);
  assert.deepEqual(bridgePorts(bridge), []);
});

const warmNames = (): string[] => netnsNames().filter((n) => n.startsWith('cvwarm-'));

function linksIn(ns: string): string {
  return execFileSync('ip', ['-n', ns, '-o', 'link', 'show'], { encoding: 'utf8' });
}

test('a bridge allocation takes a warm namespace: named after it, new (nothing of the one before), removed whole; close() removes the idle ones', async () => {
  const c = configurator(2);
  const first = fakeAlloc('bridge', [{ Label: 'http', Value: 29993, To: 8080 }]);
  await c.setup(first);
  assert.equal(await c.warmSettled(), 2, 'the first bridge set-up starts the pool');
  assert.equal(warmNames().length, 2);
  // What an allocation leaves in its namespace must not reach the next one.
  execFileSync('ip', ['-n', first.ID, 'link', 'add', 'leftover0', 'type', 'veth', 'peer', 'name', 'leftover1']);
  await c.teardown(first.ID);

  const second = fakeAlloc('bridge', [{ Label: 'http', Value: 29994, To: 8080 }]);
  const net = await c.setup(second);
  assert.ok(netnsNames().includes(second.ID), 'the namespace is named after the allocation');
  assert.ok(!linksIn(second.ID).includes('leftover0'), 'a warm namespace is a new one');
  assert.ok(linksIn(second.ID).includes(`${net!.interfaceName}@`), 'eth0 is in it');
  assert.ok(rulesMentioning(`${net!.address}:8080`).length > 0, 'portmap ran with the allocation\'s port');
  assert.equal(await c.warmSettled(), 2, 'the pool refills after a take');
  // The allocation's name is a link to the warm name (no process on the set-up's path): one namespace, two names.
  const taken = await readlink(`/var/run/netns/${second.ID}`);
  assert.ok(taken.startsWith('cvwarm-') && warmNames().includes(taken));
  assert.equal(warmNames().length, 3, 'the taken warm name stays while the allocation runs');

  await c.teardown(second.ID);
  assert.ok(!netnsNames().includes(second.ID));
  assert.ok(!warmNames().includes(taken), 'teardown removes the warm name with the link');
  assert.deepEqual(rulesMentioning(`${net!.address}:`), []);
  assert.deepEqual(rulesMentioning(`${net!.address}/32`), []);
  assert.equal(bridgePorts(bridge).length, 2, 'only the warm namespaces are on the bridge');

  await c.close();
  assert.deepEqual(warmNames(), []);
  assert.deepEqual(bridgePorts(bridge), []);
  assert.deepEqual((await readdir(stateDir)).filter((f) => f.endsWith('.json')), [], 'no record is left');
});

test('a starting agent sweeps the warm namespaces a dead agent left', async () => {
  const dead = configurator(2);
  const live = fakeAlloc('bridge');
  await dead.setup(live);
  assert.equal(await dead.warmSettled(), 2);
  // The agent is killed here: no close().
  assert.deepEqual((await configurator().sweep(new Set([live.ID]))).filter((id) => !id.startsWith('cvwarm-')), []);
  assert.deepEqual(warmNames(), []);
  assert.equal(bridgePorts(bridge).length, 1, 'the live allocation keeps its network');
  await configurator().teardown(live.ID);
  assert.deepEqual(bridgePorts(bridge), []);
});

test('a set-up waits for the teardown still holding its host port (a stale DNAT rule would match first), for its port rules only', async () => {
  const c = configurator(1);
  const old = fakeAlloc('bridge', [{ Label: 'http', Value: 29995, To: 8080 }]);
  const oldNet = await c.setup(old);
  await c.warmSettled();
  // The servers free the port once the old allocation is reported stopped, before its teardown ends.
  let tornDown = false;
  const stopping = c.teardown(old.ID).then(() => (tornDown = true));
  const next = fakeAlloc('bridge', [{ Label: 'http', Value: 29995, To: 9090 }]);
  const nextNet = await c.setup(next);
  assert.deepEqual(rulesMentioning(`${oldNet!.address}:`), [], 'the old mapping was gone before the new one was made');
  // The rest of the old teardown (its DEL chain: several plugin processes, then the namespace)
  // is not on the new allocation's path: one iptables-restore is.
  assert.equal(tornDown, false, 'the set-up did not wait for the whole teardown');
  assert.equal(rulesMentioning(`${nextNet!.address}:9090`).length > 0, true);
  await stopping;
  assert.ok(!netnsNames().includes(old.ID));
  assert.deepEqual(rulesMentioning(`${oldNet!.address}/32`), [], 'the old firewall and masquerade rules went with the DEL chain');
  await c.teardown(next.ID);
  await c.close();
  assert.deepEqual(bridgePorts(bridge), []);
});

test('a second name is a link: removing it leaves the namespace; one whose first name is gone is removed all the same, and is not restored', async () => {
  if (setupError) throw setupError;
  const first = `cvtest-${randomUUID().slice(0, 8)}`;
  const second = randomUUID();
  await createNetns(first, true);
  try {
    await aliasNetns(first, second);
    assert.equal(await readlink(`/var/run/netns/${second}`), first);
    await assert.rejects(aliasNetns(first, second), 'a name that is taken is never replaced');
    await deleteNetns(second);
    assert.ok(netnsNames().includes(first) && !netnsNames().includes(second), 'only the link went');
    await aliasNetns(first, second);
    await deleteNetns(first);
    assert.equal(await configurator().restore(second), null, 'nothing recorded, nothing restored');
    await deleteNetns(second);
    await assert.rejects(lstat(`/var/run/netns/${second}`), 'the dangling link is removed');
  } finally {
    await deleteNetns(second).catch(() => undefined);
    await deleteNetns(first).catch(() => undefined);
  }
});

test('a warm take that fails is undone and the allocation set up from scratch', async () => {
  const c = configurator(1);
  const first = fakeAlloc('bridge');
  await c.setup(first);
  assert.equal(await c.warmSettled(), 1);
  const [warm] = warmNames();
  const next = fakeAlloc('bridge', [{ Label: 'http', Value: 29996, To: 8080 }]);
  // A stale file where the allocation's name goes (a crash inside `ip netns add`): naming the warm namespace fails.
  await writeFile(`/var/run/netns/${next.ID}`, '');
  const net = await c.setup(next);
  assert.ok(netnsNames().includes(next.ID));
  assert.ok(linksIn(next.ID).includes('eth0@'));
  assert.ok(rulesMentioning(`${net!.address}:8080`).length > 0);
  assert.ok(!netnsNames().includes(warm!), 'the warm namespace is removed');
  assert.deepEqual(rulesMentioning(warm!), [], 'with what it held');
  await c.teardown(first.ID);
  await c.teardown(next.ID);
  await c.close();
  assert.deepEqual(warmNames(), []);
  assert.deepEqual(bridgePorts(bridge), []);
});
