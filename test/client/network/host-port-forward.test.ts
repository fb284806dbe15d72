/**
 * The client's host-port forwarding (issue 29) against the CNI portmap plugin it stands in for:
 * on the real kernel, the rules it writes in one iptables-restore are the plugin's, rule for
 * rule (so either removes the other's, and shared chains are never duplicated), and one
 * allocation's removal leaves another's rules as they were. Needs root and the CNI plugins.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { bridgeConflist, DEFAULT_ADMIN_CHAIN } from '../../../src/client/network/cni-conflist.js';
import { addCniNetwork, delCniNetwork, sandboxSubnet } from '../../../src/client/network/cni-network.js';
import { addHostPortForward, enableRouteLocalnet, hostPortChain, hostPortForwardPresent, removeHostPortForward, sharedChainsText, unforwardRulesText, type HostPortForward } from '../../../src/client/network/host-port-forward.js';
import { createNetns, deleteNetns, netnsPath } from '../../../src/client/network/net-namespace.js';
import { CNI_PLUGIN_DIR, hostAddress, requireGroupNetworking } from '../../integration/helpers/group-network.js';
import { spawn } from 'node:child_process';

test('chain names are portmap\'s: CNI-DN- and sha512(network + container ID), 28 characters', () => {
  // Read off the chain the plugin made for network "nomad", container "cvprobe-1".
  assert.equal(hostPortChain('nomad', 'cvprobe-1'), 'CNI-DN-4b24ca43648dca5fd2bae');
  assert.notEqual(hostPortChain('nomad', 'a'), hostPortChain('nomad', 'b'));
});

test('the subnet hairpin traffic is masqueraded from is the address\'s network', () => {
  const result = { interfaces: [{ name: 'eth0', sandbox: '/var/run/netns/x' }], ips: [{ version: '4', interface: 0, address: '172.26.64.7/20' }] };
  assert.equal(sandboxSubnet(result, 'eth0'), '172.26.64.0/20');
  assert.throws(() => sandboxSubnet({ interfaces: [], ips: [] }, 'eth0'), /eth0/);
});

test('more than 15 host ports are split over several multiport entries, as iptables needs', () => {
  const mappings = Array.from({ length: 17 }, (_, i) => ({ hostPort: 30000 + i, containerPort: 80, protocol: 'tcp' as const }));
  const text = unforwardRulesText({ network: 'nomad', containerId: 'c', address: '10.0.0.2', subnet: '10.0.0.0/24', mappings });
  const entries = text.split('\n').filter((l) => l.startsWith('-D CNI-HOSTPORT-DNAT'));
  assert.equal(entries.length, 2);
  assert.ok(entries[0]!.includes('--dports 30000,30001,30002,30003,30004,30005,30006,30007,30008,30009,30010,30011,30012,30013,30014 '));
  assert.ok(entries[1]!.includes('--dports 30015,30016 '));
});

const BRIDGE = `cvpf${randomBytes(3).toString('hex')}`;
const N = 20 + Math.floor(Math.random() * 200);
const SUBNET = `172.30.${N}.0/24`;
let ready: Error | null = null;
const made: string[] = [];

before(async () => {
  try {
    requireGroupNetworking();
  } catch (err) {
    ready = err as Error;
  }
});

after(async () => {
  if (ready) return;
  for (const id of made) await deleteNetns(id).catch(() => undefined);
  execFileSync('ip', ['link', 'delete', BRIDGE], { stdio: 'ignore' });
  await rm(`/tmp/${BRIDGE}-ipam`, { recursive: true, force: true });
});

/** The nat rules and chain declarations of one container's forwarding, as iptables-save prints them. */
function forwardingRules(f: HostPortForward): string[] {
  const chain = hostPortChain(f.network, f.containerId);
  return execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(chain))
    .map((l) => l.replace(/\[\d+:\d+\]/, '[0:0]'));
}

/** A namespace on the test bridge through the plugins up to firewall: an allocation's, before its ports. */
async function namespace(hairpinMode = false): Promise<{ f: HostPortForward; list: ReturnType<typeof bridgeConflist>; a: Parameters<typeof addCniNetwork>[1]; prev: Record<string, unknown> | null }> {
  if (ready) throw ready;
  const id = `cvpf-${randomBytes(6).toString('hex')}`;
  made.push(id);
  const list = bridgeConflist({ bridgeName: BRIDGE, subnet: SUBNET, hairpinMode, adminChain: DEFAULT_ADMIN_CHAIN, ipamDataDir: `/tmp/${BRIDGE}-ipam` });
  const mappings = [
    { hostPort: 29871, containerPort: 8080, protocol: 'tcp' as const },
    { hostPort: 29871, containerPort: 8080, protocol: 'udp' as const },
    { hostPort: 29872, containerPort: 29872, protocol: 'tcp' as const },
    { hostPort: 29872, containerPort: 29872, protocol: 'udp' as const },
  ];
  const a = { containerId: id, netnsPath: netnsPath(id), ifName: 'eth0', cniPath: [CNI_PLUGIN_DIR], portMappings: mappings };
  await createNetns(id, false);
  const added = await addCniNetwork(list, a, { from: 0, to: 3, prev: null });
  return { f: { network: list.name, containerId: id, address: added.address, subnet: sandboxSubnet(added.result, 'eth0'), mappings }, list, a, prev: added.result };
}

async function remove(n: Awaited<ReturnType<typeof namespace>>): Promise<void> {
  await delCniNetwork({ ...n.list, plugins: n.list.plugins.slice(0, 3) }, n.a, n.prev);
  await deleteNetns(n.f.containerId);
}

test('the rules are the portmap plugin\'s, rule for rule; each removes the other\'s; shared chains are not duplicated', async () => {
  const n = await namespace();
  try {
    // The plugin first, as a cni/<name> network still runs it.
    await addCniNetwork(n.list, n.a, { from: 3, to: 4, prev: n.prev });
    const plugin = forwardingRules(n.f);
    assert.ok(plugin.some((l) => l.includes(`DNAT --to-destination ${n.f.address}:8080`)), plugin.join('\n'));
    assert.equal(sharedChainsText(execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' })), '', 'the plugin made exactly the shared rules the client would');
    // The client's removal takes the plugin's rules away...
    await removeHostPortForward(n.f);
    assert.deepEqual(forwardingRules(n.f), []);
    // ...and makes the same ones.
    await addHostPortForward(n.f);
    assert.deepEqual(forwardingRules(n.f), plugin);
    assert.equal(await hostPortForwardPresent(n.f), true);
    // The plugin's DEL removes the client's.
    await delCniNetwork({ ...n.list, plugins: [n.list.plugins[3]!] }, n.a, n.prev);
    assert.deepEqual(forwardingRules(n.f), []);
    assert.equal(await hostPortForwardPresent(n.f), false);
    // Removing what is gone already is not an error (a teardown repeated after a crash).
    await removeHostPortForward(n.f);
  } finally {
    await remove(n);
  }
});

test('removing one allocation\'s forwarding leaves another\'s as it was', async () => {
  const one = await namespace();
  const two = await namespace();
  try {
    const other = { ...two.f, mappings: two.f.mappings.map((m) => ({ ...m, hostPort: m.hostPort + 10 })) };
    await addHostPortForward(one.f);
    await addHostPortForward(other);
    const before = forwardingRules(other);
    assert.ok(before.length > 0);
    await removeHostPortForward(one.f);
    assert.deepEqual(forwardingRules(one.f), []);
    assert.deepEqual(forwardingRules(other), before);
    await removeHostPortForward(other);
    assert.deepEqual(forwardingRules(other), []);
  } finally {
    await remove(one);
    await remove(two);
  }
});

/** Runs node inside the namespace. */
function inNamespace(ns: string, script: string): ReturnType<typeof spawn> {
  return spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
}

async function output(ns: string, script: string): Promise<string> {
  const child = inNamespace(ns, script);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  return out.trim();
}

test('through the rules, the allocation is reached on 127.0.0.1:<host port> from the host and on <host address>:<host port> from itself (hairpin)', async () => {
  // With br_netfilter (docker loads it) a packet DNATed back to the port it came in on is
  // dropped by the bridge unless the port has hairpin mode: Nomad's bridge_network_hairpin_mode.
  const n = await namespace(true);
  const server = inNamespace(n.f.containerId, "require('http').createServer((q, r) => r.end('from ' + q.socket.remoteAddress)).listen(8080, '0.0.0.0', () => console.log('up'))");
  try {
    await new Promise<void>((resolve, reject) => {
      server.stdout!.once('data', () => resolve());
      server.once('exit', (code) => reject(new Error(`server exited ${String(code)}`)));
    });
    await enableRouteLocalnet(BRIDGE);
    await addHostPortForward(n.f);
    const gateway = SUBNET.replace('0/24', '1');
    // The host's loopback: masqueraded to the bridge's address (route_localnet lets it leave lo).
    const local = await (await fetch('http://127.0.0.1:29871/', { signal: AbortSignal.timeout(5_000) })).text();
    assert.equal(local, `from ${gateway}`);
    // Hairpin: the allocation to its own host port, masqueraded too (else the reply would not come back the same way).
    const self = await output(n.f.containerId, `fetch('http://${hostAddress()}:29871/', { signal: AbortSignal.timeout(5000) }).then((r) => r.text()).then(console.log, (e) => console.log('ERR', String(e.cause ?? e)))`);
    assert.equal(self, `from ${gateway}`);
  } finally {
    server.kill();
    await removeHostPortForward(n.f);
    await remove(n);
  }
});
