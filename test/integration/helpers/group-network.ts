/**
 * Group network tests' own bridge: each test agent gets a bridge name and a /24 of its own
 * (never Nomad's default "nomad" and 172.26.64.0/20, which a real client on the machine may
 * use), and the test removes the bridge and the per-bridge rules the client added when it ends.
 * Traffic goes only between the host and namespaces the tests' allocations created.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';

/** Where Debian's containernetworking-plugins puts the CNI plugins. */
export const CNI_PLUGIN_DIR = '/usr/lib/cni';

/**
 * Fails (never skips) with what is missing when the machine cannot run group networks: root,
 * iproute2, iptables, nsenter and the CNI reference plugins (CI installs them: .ci/run).
 */
export function requireGroupNetworking(): void {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (network namespaces and iptables need it)');
  for (const tool of ['ip', 'iptables', 'nsenter']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) missing.push(`${tool} on PATH`);
  }
  for (const plugin of ['bridge', 'host-local', 'loopback', 'firewall', 'portmap']) {
    try {
      accessSync(join(CNI_PLUGIN_DIR, plugin), constants.X_OK);
    } catch {
      missing.push(`${CNI_PLUGIN_DIR}/${plugin} (apt-get install containernetworking-plugins)`);
    }
  }
  if (missing.length > 0) throw new Error(`group network tests need: ${missing.join('; ')}`);
}

/** A test bridge: its name and subnet, and its gateway (the host's address on it). */
export interface TestBridge {
  name: string;
  subnet: string;
  gateway: string;
}

/** A bridge name (≤ 15 bytes) and a 172.31.N.0/24 no other test is likely to hold. */
export function testBridge(): TestBridge {
  const n = Math.floor(Math.random() * 200) + 20;
  const name = `cvt${process.pid.toString(36)}${n.toString(36)}`.slice(0, 15);
  return { name, subnet: `172.31.${n}.0/24`, gateway: `172.31.${n}.1` };
}

/**
 * Writes the agent config file naming the bridge and Debian's plugin directory, and with
 * `cniConfigDir` that directory for `cni/<name>` networks; returns its path.
 */
export async function bridgeConfigFile(dir: string, b: TestBridge, cniConfigDir?: string): Promise<string> {
  const file = join(dir, 'group-network.hcl');
  const cni = cniConfigDir ? `  cni_config_dir        = "${cniConfigDir}"\n` : '';
  await writeFile(
    file,
    `client {\n  bridge_network_name   = "${b.name}"\n  bridge_network_subnet = "${b.subnet}"\n  cni_path              = "${CNI_PLUGIN_DIR}"\n${cni}}\n`,
  );
  return file;
}

/** A conflist for `cni/<name>`: a bridge of its own (the second test bridge), host-local, portmap. */
export async function writeCniConflist(dir: string, name: string, b: TestBridge): Promise<void> {
  const list = {
    cniVersion: '0.4.0',
    name,
    plugins: [
      { type: 'bridge', bridge: b.name, isGateway: true, ipMasq: true, ipam: { type: 'host-local', ranges: [[{ subnet: b.subnet }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: join(dir, 'ipam') } },
      { type: 'portmap', capabilities: { portMappings: true }, snat: true },
    ],
  };
  await writeFile(join(dir, `${name}.conflist`), JSON.stringify(list));
}

function quiet(cmd: string, args: string[]): void {
  spawnSync(cmd, args, { stdio: 'ignore' });
}

/** Removes the test bridge and the per-bridge rules the client adds (allocation rules go with each teardown). */
export function removeTestBridge(b: TestBridge): void {
  quiet('iptables', ['-w', '-D', 'INPUT', '-i', b.name, '-d', '127.0.0.0/8', '-m', 'conntrack', '!', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'DROP']);
  quiet('iptables', ['-w', '-D', 'NOMAD-ADMIN', '-o', b.name, '-d', b.subnet, '-j', 'ACCEPT']);
  quiet('ip', ['link', 'delete', b.name]);
}

/** The host's first non-loopback IPv4 address (traffic to it from a namespace leaves through the bridge). */
export function hostAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal && !a.address.startsWith('172.31.')) return a.address;
  }
  throw new Error('the host has no non-loopback IPv4 address');
}

/** Names of the named network namespaces (ip netns list). */
export function netnsNames(): string[] {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.split(' ')[0]!)
    .filter((n) => n !== '');
}

/** Interfaces enslaved to the bridge (one veth per allocation on it). */
export function bridgePorts(b: TestBridge): string[] {
  const r = spawnSync('ip', ['-o', 'link', 'show', 'master', b.name], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

/** iptables rules (filter and nat) mentioning `needle` (an allocation ID or address). */
export function rulesMentioning(needle: string): string[] {
  const out = execFileSync('iptables-save', [], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes(needle));
}
