/**
 * Group network set-up and teardown on this machine (issue 29: a bridge allocation's network
 * set up in ≤ 30 ms median, torn down in ≤ 30 ms): the client's AllocNetworkConfigurator with
 * the real kernel and Debian's CNI plugins, on a bridge and subnet of the benchmark's own
 * (removed at the end), for modes bridge (namespace + loopback, bridge/host-local, firewall,
 * then one mapped port forwarded with portmap's rules in one iptables-restore, the client's
 * standby process started ahead) and none
 * (namespace, loopback up). Bridge is measured three ways: "bridge" as the client runs it (a
 * warm namespace taken from the pool, then the port rules; the pool refills in the background
 * between allocations), "bridge-noport" (a warm namespace, no ports) and "bridge-cold" with the
 * pool disabled (the whole chain per allocation). Teardown is measured twice: "ports free",
 * when the port rules are gone and a set-up on those host ports may go on (what anything
 * waits for), and "whole", when the DEL chain and the namespace's removal have ended too (the
 * client runs teardown after the allocation is reported stopped). A teardown starts once the
 * refills after its set-up (warm namespace, standby iptables-restore) are done, as they are when
 * an allocation runs longer than a refill (~0.3 s here); `--at-once` tears down right after the
 * set-up instead (the ports-free figure then includes starting an iptables-restore).
 *
 * Beside them, Nomad's chain from scratch, step by step: what Nomad runs per allocation with
 * the same plugins (its own namespace, then each plugin's ADD, portmap included; DEL in
 * reverse) — Nomad itself cannot be built or installed on this machine.
 *
 * Usage (root): node dist/bench/network/network-setup.js [-n N] [--at-once]   (default 20 per mode)
 * Prints the medians and p90s beside the goal, then the median of each step of Nomad's chain
 * and of the client's port rules, and writes bench/results/network.json.
 */
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { AllocNetworkConfigurator, clientNetworkConfig } from '../../src/client/network/alloc-network-configurator.js';
import { bridgeConflist, DEFAULT_ADMIN_CHAIN } from '../../src/client/network/cni-conflist.js';
import { addCniNetwork, delCniNetwork, sandboxSubnet } from '../../src/client/network/cni-network.js';
import { addHostPortForward, removeHostPortForward } from '../../src/client/network/host-port-forward.js';
import { StandbyIptablesRestore } from '../../src/client/network/standby-iptables-restore.js';
import { createNetns, deleteNetns, netnsPath } from '../../src/client/network/net-namespace.js';
import { percentile } from '../percentile.js';

const GOAL_MS = 30;
/** What a process started in the background needs to be past its own start (exec, libraries) on this VM. */
const STARTED_MS = 100;
const started = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, STARTED_MS));
const BRIDGE = 'cvbench0';
const SUBNET = '172.31.251.0/24';

function alloc(mode: string, port: number | null): Allocation {
  return {
    ID: randomUUID(),
    TaskGroup: 'g',
    Job: { TaskGroups: [{ Name: 'g', Networks: [{ Mode: mode, DNS: null }] }] },
    AllocatedResources: { Shared: { Networks: null, DiskMB: 0, Ports: mode === 'bridge' && port !== null ? [{ Label: 'http', Value: port, To: 8080, HostIP: '' }] : [] } },
  } as unknown as Allocation;
}

function summary(samples: number[]): { median: number; p90: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { median: percentile(s, 50), p90: percentile(s, 90) };
}

/** Each step of Nomad's bridge chain on its own, from scratch: `ip netns add`, each plugin's ADD, each DEL in reverse, `ip netns delete`. */
async function profileSteps(n: number, stateDir: string): Promise<Record<string, number>> {
  const list = bridgeConflist({ bridgeName: BRIDGE, subnet: SUBNET, hairpinMode: false, adminChain: DEFAULT_ADMIN_CHAIN, ipamDataDir: join(stateDir, 'ipam') });
  const samples: Record<string, number[]> = {};
  const time = async (step: string, f: () => Promise<unknown>): Promise<void> => {
    const t = performance.now();
    await f();
    (samples[step] ??= []).push(performance.now() - t);
  };
  for (let i = 0; i < n; i++) {
    const id = `cvprof-${i}`;
    const a = { containerId: id, netnsPath: netnsPath(id), ifName: 'eth0', cniPath: ['/usr/lib/cni'], portMappings: [{ hostPort: 29100 + i, containerPort: 8080, protocol: 'tcp' as const }, { hostPort: 29100 + i, containerPort: 8080, protocol: 'udp' as const }] };
    await time('ip netns add', () => createNetns(id, false));
    let prev: Record<string, unknown> | null = null;
    for (let p = 0; p < list.plugins.length; p++) {
      await time(`ADD ${String(list.plugins[p]!['type'])}`, async () => {
        prev = (await addCniNetwork(list, a, { from: p, to: p + 1, prev })).result;
      });
    }
    for (const plugin of [...list.plugins].reverse()) await time(`DEL ${String(plugin['type'])}`, () => delCniNetwork({ ...list, plugins: [plugin] }, a, prev));
    await time('ip netns delete', () => deleteNetns(id));
  }
  // The client's replacement for portmap, on a namespace through firewall: one restore each way.
  const id = 'cvprof-own';
  const a = { containerId: id, netnsPath: netnsPath(id), ifName: 'eth0', cniPath: ['/usr/lib/cni'], portMappings: [] };
  await createNetns(id, false);
  const head = await addCniNetwork(list, a, { from: 0, to: 3, prev: null });
  for (let i = 0; i < n; i++) {
    const f = { network: list.name, containerId: id, address: head.address, subnet: sandboxSubnet(head.result, 'eth0'), mappings: [{ hostPort: 29100 + i, containerPort: 8080, protocol: 'tcp' as const }, { hostPort: 29100 + i, containerPort: 8080, protocol: 'udp' as const }] };
    await time('own port rules add', () => addHostPortForward(f));
    await time('own port rules remove', () => removeHostPortForward(f));
  }
  // The same through a standby process started ahead (what the client does): the rules' own cost.
  const standby = new StandbyIptablesRestore();
  const apply = (text: string): Promise<void> => standby.apply(text);
  for (let i = 0; i < n; i++) {
    const f = { network: list.name, containerId: id, address: head.address, subnet: sandboxSubnet(head.result, 'eth0'), mappings: [{ hostPort: 29100 + i, containerPort: 8080, protocol: 'tcp' as const }, { hostPort: 29100 + i, containerPort: 8080, protocol: 'udp' as const }] };
    standby.refill();
    await standby.settled();
    await started();
    await time('own port rules add, standby', () => addHostPortForward(f, apply));
    standby.refill();
    await standby.settled();
    await started();
    await time('own port rules remove, standby', () => removeHostPortForward(f, apply));
  }
  await standby.close();
  await delCniNetwork({ ...list, plugins: list.plugins.slice(0, 3) }, a, head.result);
  await deleteNetns(id);
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, percentile([...v].sort((x, y) => x - y), 50)]));
}

async function main(): Promise<void> {
  const nArg = process.argv.indexOf('-n');
  const n = nArg > 0 ? Number(process.argv[nArg + 1]) : 20;
  const atOnce = process.argv.includes('--at-once');
  const loadAtStart = loadavg()[0]!;
  if (process.getuid?.() !== 0) throw new Error('the network benchmark needs root (network namespaces, iptables)');
  const stateDir = mkdtempSync(join(tmpdir(), 'cv-netbench-'));
  const cfg = { bridgeName: BRIDGE, bridgeSubnet: SUBNET, cniPath: ['/usr/lib/cni'] };
  const warm = new AllocNetworkConfigurator(clientNetworkConfig(cfg), stateDir);
  const cold = new AllocNetworkConfigurator(clientNetworkConfig({ ...cfg, warmNamespaces: 0 }), stateDir);
  let steps: Record<string, number> = {};
  type Summary = { median: number; p90: number };
  const results: Record<string, { setup: Summary; portsFree: Summary; teardown: Summary }> = {};
  try {
    // One warm-up: the first set-up creates the bridge and the admin chain (and starts the warm pool).
    const first = alloc('bridge', 29000);
    await warm.setup(first);
    await warm.teardown(first.ID);
    for (const mode of ['bridge', 'bridge-noport', 'bridge-cold', 'none']) {
      const setup: number[] = [];
      const portsFree: number[] = [];
      const teardown: number[] = [];
      const c = mode === 'bridge-cold' ? cold : warm;
      for (let i = 0; i < n; i++) {
        const a = alloc(mode === 'none' ? 'none' : 'bridge', mode === 'bridge-noport' ? null : 29001 + i);
        // Steady state: the refill after the previous allocation has finished (as it has when
        // allocations arrive further apart than a refill, ~0.1–0.3 s here).
        await warm.warmSettled();
        await started();
        let t = performance.now();
        await c.setup(a);
        setup.push(performance.now() - t);
        if (!atOnce) {
          await c.warmSettled();
          await started();
        }
        t = performance.now();
        let free = Number.NaN;
        await c.teardown(a.ID, () => (free = performance.now() - t));
        teardown.push(performance.now() - t);
        portsFree.push(free);
      }
      results[mode] = { setup: summary(setup), portsFree: summary(portsFree), teardown: summary(teardown) };
    }
    steps = await profileSteps(n, stateDir);
  } finally {
    await warm.close();
    spawnSync('iptables', ['-w', '-D', 'INPUT', '-i', BRIDGE, '-d', '127.0.0.0/8', '-m', 'conntrack', '!', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'DROP'], { stdio: 'ignore' });
    spawnSync('iptables', ['-w', '-D', 'NOMAD-ADMIN', '-o', BRIDGE, '-d', SUBNET, '-j', 'ACCEPT'], { stdio: 'ignore' });
    spawnSync('ip', ['link', 'delete', BRIDGE], { stdio: 'ignore' });
    rmSync(stateDir, { recursive: true, force: true });
  }
  const f = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`group network, ${n} allocations per mode (goal: median ≤ ${GOAL_MS} ms each way)${atOnce ? ', teardown at once after set-up' : ''}; load average ${loadAtStart.toFixed(1)} at the start, ${loadavg().map((x) => x.toFixed(1)).join(' ')} at the end, ${new Date().toISOString()}`);
  const goal = (ms: number): string => (ms <= GOAL_MS ? 'within' : 'OVER');
  for (const [mode, r] of Object.entries(results)) {
    console.log(`  ${mode.padEnd(13)} set-up              median ${f(r.setup.median)}  p90 ${f(r.setup.p90)}  ${goal(r.setup.median)} the goal`);
    console.log(`  ${mode.padEnd(13)} teardown, ports free median ${f(r.portsFree.median)}  p90 ${f(r.portsFree.p90)}  ${goal(r.portsFree.median)} the goal`);
    console.log(`  ${mode.padEnd(13)} teardown, whole      median ${f(r.teardown.median)}  p90 ${f(r.teardown.p90)}  (off every path: after the allocation is reported stopped)`);
  }
  const sum = (prefix: string, extra: string): number => Object.entries(steps).filter(([k]) => k.startsWith(prefix) || k === extra).reduce((acc, [, v]) => acc + v, 0);
  console.log(`Nomad's chain from scratch (the same plugins, portmap included), median per step — set-up ${f(sum('ADD ', 'ip netns add'))}, teardown ${f(sum('DEL ', 'ip netns delete'))}:`);
  for (const [step, ms] of Object.entries(steps)) if (!step.startsWith('own ')) console.log(`  ${step.padEnd(22)} ${f(ms)}`);
  console.log('the client\'s port rules in place of portmap (one iptables-restore each way; started then, or the standby started ahead):');
  for (const [step, ms] of Object.entries(steps)) if (step.startsWith('own ')) console.log(`  ${step.padEnd(31)} ${f(ms)}`);
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/network.json', JSON.stringify({ n, atOnce, goalMs: GOAL_MS, at: new Date().toISOString(), loadAtStart, loadavg: loadavg(), results, steps }, null, 2) + '\n');
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
