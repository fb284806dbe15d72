/**
 * Issue 29: the client writes a bridge allocation's port forwarding as an iptables-restore
 * ruleset text, from the allocation's ports (from the servers) and the CNI result. A value that
 * is not a port or an address — a newline and a rule of its own, an option — must never become
 * part of the host's firewall: the set-up is refused naming the field, and nothing of it stays.
 * Runs the real configurator on a test bridge (root, CNI plugins).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { AllocNetworkConfigurator, clientNetworkConfig } from '../../src/client/network/alloc-network-configurator.js';
import { checkHostPortForward, forwardRulesText } from '../../src/client/network/host-port-forward.js';
import { hasErrorCode } from '../../src/structs/caravan-error.js';
import { bridgePorts, CNI_PLUGIN_DIR, netnsNames, removeTestBridge, requireGroupNetworking, rulesMentioning, testBridge, type TestBridge } from '../integration/helpers/group-network.js';

const ok = { network: 'nomad', containerId: 'c1', address: '10.0.0.2', subnet: '10.0.0.0/24', mappings: [{ hostPort: 25000, containerPort: 8080, protocol: 'tcp' as const }] };

test('values that are not ports, addresses or names never reach the ruleset text', () => {
  assert.doesNotThrow(() => checkHostPortForward(ok));
  const attempts: [string, object][] = [
    ['hostPort', { mappings: [{ hostPort: '25000\n-A INPUT -j ACCEPT', containerPort: 8080, protocol: 'tcp' }] }],
    ['hostPort', { mappings: [{ hostPort: 70000, containerPort: 8080, protocol: 'tcp' }] }],
    ['containerPort', { mappings: [{ hostPort: 25000, containerPort: '8080 -j ACCEPT', protocol: 'tcp' }] }],
    ['protocol', { mappings: [{ hostPort: 25000, containerPort: 8080, protocol: 'all -j ACCEPT' }] }],
    ['hostIP', { mappings: [{ hostPort: 25000, containerPort: 8080, protocol: 'tcp', hostIP: '0.0.0.0/0 -j ACCEPT' }] }],
    ['address', { address: '10.0.0.2:1\nCOMMIT' }],
    ['subnet', { subnet: '0.0.0.0/0 ! -s 1.2.3.4' }],
    ['containerId', { containerId: 'x" -j ACCEPT' }],
  ];
  for (const [field, change] of attempts) {
    assert.throws(() => forwardRulesText({ ...ok, ...change } as typeof ok), (err: Error) => err.message.includes(field), field);
  }
});

let bridge: TestBridge;
let stateDir: string;
let unavailable: Error | null = null;

before(async () => {
  try {
    requireGroupNetworking();
  } catch (err) {
    unavailable = err as Error;
    return;
  }
  bridge = testBridge();
  stateDir = await mkdtemp(join(tmpdir(), 'cv-netinj-'));
});

after(async () => {
  if (unavailable) return;
  removeTestBridge(bridge);
  await rm(stateDir, { recursive: true, force: true });
});

test('an allocation whose port carries a rule is refused naming the field, and leaves no rule, namespace or veth', async () => {
  if (unavailable) throw unavailable;
  const c = new AllocNetworkConfigurator(clientNetworkConfig({ bridgeName: bridge.name, bridgeSubnet: bridge.subnet, cniPath: [CNI_PLUGIN_DIR], warmNamespaces: 0 }), stateDir);
  const marker = `cvinj${Date.now().toString(36)}`;
  const alloc = {
    ID: randomUUID(),
    TaskGroup: 'g',
    Job: { TaskGroups: [{ Name: 'g', Networks: [{ Mode: 'bridge', DNS: null, Hostname: '' }] }] },
    AllocatedResources: { Shared: { Networks: null, DiskMB: 0, Ports: [{ Label: 'http', Value: `29981\n-A INPUT -m comment --comment ${marker} -j ACCEPT`, To: 8080, HostIP: '' }] } },
  } as unknown as Allocation;
  await assert.rejects(c.setup(alloc), (err: unknown) => hasErrorCode(err, 'CLIENT_NETWORK_SETUP') && (err as Error).message.includes('hostPort'));
  assert.deepEqual(rulesMentioning(marker), [], 'the injected rule is nowhere');
  assert.deepEqual(rulesMentioning(alloc.ID), [], 'nothing of the refused set-up stays');
  assert.ok(!netnsNames().includes(alloc.ID));
  assert.deepEqual(bridgePorts(bridge), []);
  await c.close();
});
