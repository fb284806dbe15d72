/**
 * An allocation's host ports forwarded into its namespace with exactly the rules the CNI
 * `portmap` plugin (1.1.x, `snat: true`, mark bit 13) makes — same chains, same names, same
 * matches, same order — written in one `iptables-restore` per set-up and one per teardown
 * instead of the plugin's ~27 `iptables` processes for one port (issue 29).
 *
 *   nat PREROUTING, OUTPUT  -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT     (shared, once)
 *   nat POSTROUTING (first) -j CNI-HOSTPORT-MASQ: MASQUERADE of packets marked 0x2000 (shared, once)
 *   nat CNI-HOSTPORT-SETMARK: MARK 0x2000                                            (shared, once)
 *   nat CNI-HOSTPORT-DNAT   -p <proto> -m multiport --dports <host ports> -j CNI-DN-<hash>
 *   nat CNI-DN-<hash>, per mapping:
 *       -s <alloc subnet>  --dport <host port> -j CNI-HOSTPORT-SETMARK   (hairpin: masqueraded)
 *       -s 127.0.0.1       --dport <host port> -j CNI-HOSTPORT-SETMARK   (127.0.0.1:<port>: masqueraded)
 *       --dport <host port> -j DNAT --to-destination <alloc address>:<to>
 *
 * plus `route_localnet` on the bridge, so 127.0.0.1:<host port> can be routed to it. Because
 * the names and rules are the plugin's, a `portmap` DEL removes what this made and the other
 * way round, and rules of `cni/<name>` networks (which still run the plugin) share the parent
 * chains without duplicates. The per-allocation chain is named from the network name and the
 * CNI container ID (sha512, as the plugins' `FormatChainNameWithPrefix`), so one allocation's
 * rules are found, and removed, without touching another's.
 */
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { access, constants, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CniPortMapping } from './cni-network.js';
import { iptablesRestore, iptablesSave, type RestoreRuleset } from './iptables-restore.js';

/** What forwarding an allocation's host ports needs: recorded before the rules are made. */
export interface HostPortForward {
  /** The CNI network name (the conflist's, "nomad" for bridge mode): part of the chain name and comment. */
  network: string;
  /** The CNI container ID the namespace's chain ran with. */
  containerId: string;
  /** The allocation's IPv4 address inside its namespace. */
  address: string;
  /** The subnet of that address (CIDR): hairpin traffic from it is masqueraded. */
  subnet: string;
  mappings: CniPortMapping[];
}

export const DNAT_CHAIN = 'CNI-HOSTPORT-DNAT';
export const SETMARK_CHAIN = 'CNI-HOSTPORT-SETMARK';
export const MASQ_CHAIN = 'CNI-HOSTPORT-MASQ';
/** portmap's default mark bit, 13. */
const MASQ_MARK = '0x2000/0x2000';
/** iptables allows at most 15 ports in one multiport match (portmap splits the same way). */
const MULTIPORT_MAX = 15;
/** iptables chain names are at most 28 characters. */
const MAX_CHAIN_LENGTH = 28;

/** The per-allocation chain: `CNI-DN-` and the start of sha512(network + container ID), as portmap names it. */
export function hostPortChain(network: string, containerId: string): string {
  const prefix = 'CNI-DN-';
  return prefix + createHash('sha512').update(network + containerId).digest('hex').slice(0, MAX_CHAIN_LENGTH - prefix.length);
}

/** Quotes a comment as iptables-save prints it (and iptables-restore reads it). */
function quoted(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The jumps from CNI-HOSTPORT-DNAT into the allocation's chain: per protocol, 15 ports at a time. */
function entryRules(f: HostPortForward): string[] {
  const chain = hostPortChain(f.network, f.containerId);
  const comment = quoted(`dnat name: "${f.network}" id: "${f.containerId}"`);
  const byProto = new Map<string, number[]>();
  for (const m of f.mappings) {
    const ports = byProto.get(m.protocol) ?? [];
    if (!ports.includes(m.hostPort)) ports.push(m.hostPort);
    byProto.set(m.protocol, ports);
  }
  const out: string[] = [];
  for (const [proto, ports] of byProto) {
    for (let i = 0; i < ports.length; i += MULTIPORT_MAX) {
      out.push(`${DNAT_CHAIN} -p ${proto} -m comment --comment ${comment} -m multiport --dports ${ports.slice(i, i + MULTIPORT_MAX).join(',')} -j ${chain}`);
    }
  }
  return out;
}

/** The rules of the allocation's chain, in portmap's order: hairpin mark, localhost mark, DNAT — per mapping. */
function chainRules(f: HostPortForward): string[] {
  const chain = hostPortChain(f.network, f.containerId);
  const out: string[] = [];
  for (const m of f.mappings) {
    const dst = m.hostIP ? ` -d ${m.hostIP}/32` : '';
    const base = `-p ${m.protocol} -m ${m.protocol} --dport ${m.hostPort}`;
    out.push(`${chain}${dst} -s ${f.subnet} ${base} -j ${SETMARK_CHAIN}`);
    out.push(`${chain}${dst} -s 127.0.0.1/32 ${base} -j ${SETMARK_CHAIN}`);
    out.push(`${chain}${dst} ${base} -j DNAT --to-destination ${f.address}:${m.containerPort}`);
  }
  return out;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * Refuses a forwarding whose values could not be an iptables word: every value goes into a
 * ruleset text, where a newline or a space would be a rule or an option of its own. Ports and
 * addresses come from the servers (the allocation) and the CNI result; they are checked here,
 * where they meet the text, whatever checked them before. Throws an Error naming the field.
 */
export function checkHostPortForward(f: HostPortForward): void {
  const bad = (field: string, value: unknown): never => {
    throw new Error(`port forwarding: ${field} ${JSON.stringify(value)} is not valid`);
  };
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(f.network)) bad('network', f.network);
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(f.containerId)) bad('containerId', f.containerId);
  if (!IPV4.test(f.address)) bad('address', f.address);
  const [net, bits, ...rest] = f.subnet.split('/');
  if (rest.length > 0 || !IPV4.test(net ?? '') || !/^(3[0-2]|[12]?\d)$/.test(bits ?? '')) bad('subnet', f.subnet);
  for (const m of f.mappings) {
    for (const [field, port] of [['hostPort', m.hostPort], ['containerPort', m.containerPort]] as const) {
      if (!Number.isInteger(port) || port < 1 || port > 65535) bad(field, port);
    }
    if (m.protocol !== 'tcp' && m.protocol !== 'udp') bad('protocol', m.protocol);
    if (m.hostIP !== undefined && m.hostIP !== '' && !IPV4.test(m.hostIP)) bad('hostIP', m.hostIP);
  }
}

/** The restore text that makes the allocation's chain and its entry (a chain already there is flushed first). */
export function forwardRulesText(f: HostPortForward): string {
  checkHostPortForward(f);
  const chain = hostPortChain(f.network, f.containerId);
  return ['*nat', `:${chain} - [0:0]`, ...chainRules(f).map((r) => `-A ${r}`), ...entryRules(f).map((r) => `-A ${r}`), 'COMMIT', ''].join('\n');
}

/** The restore text that removes the allocation's entry and chain (fails, changing nothing, when a part is gone). */
export function unforwardRulesText(f: HostPortForward): string {
  checkHostPortForward(f);
  const chain = hostPortChain(f.network, f.containerId);
  return ['*nat', ...entryRules(f).map((r) => `-D ${r}`), `-F ${chain}`, `-X ${chain}`, 'COMMIT', ''].join('\n');
}

/** The shared chains and their rules, as iptables-save prints them; `insert` for the one portmap prepends. */
const SHARED: { chain: string; rule: string; insert?: true }[] = [
  { chain: DNAT_CHAIN, rule: `PREROUTING -m addrtype --dst-type LOCAL -j ${DNAT_CHAIN}` },
  { chain: DNAT_CHAIN, rule: `OUTPUT -m addrtype --dst-type LOCAL -j ${DNAT_CHAIN}` },
  { chain: SETMARK_CHAIN, rule: `${SETMARK_CHAIN} -m comment --comment "CNI portfwd masquerade mark" -j MARK --set-xmark ${MASQ_MARK}` },
  { chain: MASQ_CHAIN, rule: `${MASQ_CHAIN} -m mark --mark ${MASQ_MARK} -j MASQUERADE` },
  // First in POSTROUTING, as portmap puts it: the bridge plugin's per-allocation masquerade rules must not match before it.
  { chain: MASQ_CHAIN, rule: `POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j ${MASQ_CHAIN}`, insert: true },
];

/**
 * The restore text adding what is missing of the shared chains, given the nat table as
 * iptables-save printed it ('' when nothing is missing). Existing rules are never duplicated.
 */
export function sharedChainsText(natSave: string): string {
  const lines = new Set(natSave.split('\n').map((l) => l.trim()));
  const chains = new Set([...lines].filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0]));
  const out: string[] = [];
  for (const name of [DNAT_CHAIN, SETMARK_CHAIN, MASQ_CHAIN]) if (!chains.has(name)) out.push(`:${name} - [0:0]`);
  for (const s of SHARED) if (!lines.has(`-A ${s.rule}`)) out.push(s.insert ? `-I ${s.rule}` : `-A ${s.rule}`);
  return out.length === 0 ? '' : ['*nat', ...out, 'COMMIT', ''].join('\n');
}

/**
 * Creates the shared chains and rules where missing (one iptables-save, and one restore when
 * something is missing). Idempotent; the client runs it once per process, off an allocation's path.
 */
export async function ensureHostPortChains(): Promise<void> {
  const text = sharedChainsText(await iptablesSave('nat'));
  if (text) await iptablesRestore(text);
}

/**
 * Lets 127.0.0.0/8 be routed to the bridge (portmap's `route_localnet` on the interface toward
 * the allocation), so 127.0.0.1:<host port> reaches it. A /proc write, not a process — made
 * synchronously: microseconds, where the thread pool's open, write and close are three round
 * trips between threads that cost milliseconds each on a loaded 2-core client.
 */
export function enableRouteLocalnet(bridge: string): void {
  // The name comes from the agent's configuration; it must not name another /proc file.
  if (!/^[A-Za-z0-9_.-]{1,15}$/.test(bridge) || bridge === '.' || bridge === '..') throw new Error(`bad bridge name "${bridge}"`);
  writeFileSync(`/proc/sys/net/ipv4/conf/${bridge}/route_localnet`, '1');
}

/**
 * Makes the allocation's forwarding rules: one iptables-restore (through `restore`, the client's
 * standby process, when given). No-op without mappings.
 */
export async function addHostPortForward(f: HostPortForward, restore: RestoreRuleset = iptablesRestore): Promise<void> {
  if (f.mappings.length === 0) return;
  await restore(forwardRulesText(f));
}

/**
 * Removes the allocation's forwarding rules: one iptables-restore when they are all there;
 * otherwise (a teardown repeated after a crash, rules removed by hand) it reads the nat table
 * and removes what is left of them. Idempotent. `restore` as addHostPortForward's.
 */
export async function removeHostPortForward(f: HostPortForward, restore: RestoreRuleset = iptablesRestore): Promise<void> {
  if (f.mappings.length === 0) return;
  try {
    await restore(unforwardRulesText(f));
    return;
  } catch {
    // some part is gone already: remove the rest, below
  }
  const chain = hostPortChain(f.network, f.containerId);
  const save = (await iptablesSave('nat')).split('\n');
  const jumps = save.filter((l) => l.startsWith(`-A ${DNAT_CHAIN} `) && l.endsWith(` -j ${chain}`)).map((l) => `-D ${l.slice('-A '.length)}`);
  const present = save.some((l) => l === `:${chain} - [0:0]` || l.startsWith(`:${chain} `));
  if (jumps.length === 0 && !present) return;
  await iptablesRestore(['*nat', ...jumps, ...(present ? [`-F ${chain}`, `-X ${chain}`] : []), 'COMMIT', ''].join('\n'));
}

/** Whether the allocation's chain is in the nat table (an agent restart finds its rules again). */
export async function hostPortForwardPresent(f: HostPortForward): Promise<boolean> {
  if (f.mappings.length === 0) return true;
  const chain = hostPortChain(f.network, f.containerId);
  const save = (await iptablesSave('nat')).split('\n');
  return save.some((l) => l.startsWith(`:${chain} `)) && save.some((l) => l.startsWith(`-A ${DNAT_CHAIN} `) && l.endsWith(` -j ${chain}`));
}

/**
 * Drops UDP conntrack entries to the allocation's host ports, as portmap does after its ADD: a
 * UDP flow seen before the rules existed (or aimed at an allocation that had the port before)
 * would otherwise keep bypassing the new DNAT until it times out. Needs the `conntrack` tool
 * (Debian's `conntrack`); without it nothing is dropped. Never fails.
 */
export async function flushStaleUdp(f: HostPortForward): Promise<void> {
  const udp = new Set(f.mappings.filter((m) => m.protocol === 'udp').map((m) => m.hostPort));
  const tool = udp.size > 0 ? await conntrackTool() : null;
  if (!tool) return;
  // Mostly there is nothing to drop: the kernel's table says so without a process (which would
  // compete for the CPU with the allocation's tasks starting). Without it, every port is tried.
  const seen = await udpConntrackPorts();
  const ports = seen ? [...udp].filter((p) => seen.has(p)) : [...udp];
  for (const port of ports) {
    await new Promise<void>((resolve) => execFile(tool, ['-D', '-p', 'udp', '--orig-port-dst', String(port)], { timeout: 10_000 }, () => resolve()));
  }
}

/**
 * The original-direction destination ports of the host's UDP conntrack entries, from
 * /proc/net/nf_conntrack; null when the kernel does not show the table there.
 */
async function udpConntrackPorts(): Promise<Set<number> | null> {
  let table: string;
  try {
    table = await readFile('/proc/net/nf_conntrack', 'utf8');
  } catch {
    return null;
  }
  const ports = new Set<number>();
  // "ipv4 2 udp 17 29 src=… dst=… sport=… dport=<port> …": the first dport is the original direction's.
  for (const m of table.matchAll(/^\S+\s+\d+\s+udp\s.*?\bdport=(\d+)/gm)) ports.add(Number(m[1]));
  return ports;
}

let conntrackLookup: Promise<string | null> | null = null;

/** Where `conntrack` is on PATH, looked up once: a spawn that fails still forks, on a set-up's path. */
function conntrackTool(): Promise<string | null> {
  conntrackLookup ??= (async () => {
    for (const dir of (process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
      if (!dir) continue;
      try {
        await access(join(dir, 'conntrack'), constants.X_OK);
        return join(dir, 'conntrack');
      } catch {
        // next directory
      }
    }
    return null;
  })();
  return conntrackLookup;
}
