/**
 * Applies a CNI conflist to a network namespace, as libcni does: ADD runs the plugins in order,
 * each given the previous one's result (`prevResult`) and, when it declares the capability,
 * the runtime config (`portMappings`); DEL runs them in reverse with the ADD's result; CHECK
 * runs them in order with it.
 */
import type { CniConflist } from './cni-conflist.js';
import { CniCommand, invokeCniPlugin, type CniInvocation } from './cni-plugin.js';

/** One host port forwarded to a port inside the namespace (the portmap plugin's capability). */
export interface CniPortMapping {
  hostPort: number;
  containerPort: number;
  protocol: 'tcp' | 'udp';
  hostIP?: string;
}

/** Where the conflist is applied. */
export interface CniAttachment {
  containerId: string;
  netnsPath: string;
  ifName: string;
  cniPath: string[];
  portMappings: CniPortMapping[];
}

/** The address the namespace got on the interface, and the plugins' final result. */
export interface CniAddResult {
  address: string;
  interfaceName: string;
  result: Record<string, unknown> | null;
}

function pluginConf(list: CniConflist, plugin: Record<string, unknown>, a: CniAttachment, prev: Record<string, unknown> | null): Record<string, unknown> {
  const conf: Record<string, unknown> = { ...plugin, cniVersion: list.cniVersion, name: list.name };
  const caps = plugin['capabilities'] as Record<string, unknown> | undefined;
  if (caps?.['portMappings'] === true) conf['runtimeConfig'] = { portMappings: a.portMappings };
  if (prev) conf['prevResult'] = prev;
  return conf;
}

function invocation(command: CniCommand, a: CniAttachment): CniInvocation {
  return { command, containerId: a.containerId, netnsPath: a.netnsPath, ifName: a.ifName, cniPath: a.cniPath };
}

/** The IPv4 (else first) address of the interface in the namespace, with its prefix length ('' when none). */
function sandboxCidr(result: Record<string, unknown> | null, ifName: string): string {
  const ifaces = (result?.['interfaces'] as { name?: string; sandbox?: string }[] | undefined) ?? [];
  const ips = (result?.['ips'] as { address?: string; interface?: number; version?: string }[] | undefined) ?? [];
  const mine = ips.filter((ip) => ip.interface === undefined || ifaces[ip.interface]?.name === ifName || Boolean(ifaces[ip.interface]?.sandbox));
  const pick = mine.find((ip) => !String(ip.address).includes(':')) ?? mine[0];
  return pick?.address ? String(pick.address) : '';
}

/** The IPv4 (else first) address of the interface in the namespace, without its prefix length. */
export function sandboxAddress(result: Record<string, unknown> | null, ifName: string): string {
  return sandboxCidr(result, ifName).split('/')[0]!;
}

/**
 * The IPv4 network the interface's address is in, as CIDR (172.26.64.7/20 → 172.26.64.0/20):
 * what portmap masquerades hairpin traffic from. Throws when the interface has no IPv4 address.
 */
export function sandboxSubnet(result: Record<string, unknown> | null, ifName: string): string {
  const cidr = sandboxCidr(result, ifName);
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
  if (!m) throw new Error(`the interface ${ifName} has no IPv4 address with a prefix (got "${cidr}")`);
  const bits = Number(m[5]);
  const addr = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const net = (addr & mask) >>> 0;
  return `${net >>> 24}.${(net >>> 16) & 255}.${(net >>> 8) & 255}.${net & 255}/${bits}`;
}

/**
 * Which plugins of the list an ADD runs: `[from, to)` (default all), continuing from `prev`, the
 * result of the plugins before `from`. A warm namespace runs the first part ahead of time and
 * the rest when an allocation takes it: still ADD in list order, each with its predecessor's result.
 */
export interface CniAddRange {
  from: number;
  to: number;
  prev: Record<string, unknown> | null;
}

/** The index of the first plugin that needs per-allocation runtime config (portMappings); the list's length when none does. */
export function firstRuntimeConfigPlugin(list: CniConflist): number {
  const i = list.plugins.findIndex((p) => (p['capabilities'] as Record<string, unknown> | undefined)?.['portMappings'] === true);
  return i < 0 ? list.plugins.length : i;
}

/** Runs ADD through the list (or `range` of it); on a failure, DELs what this call added (best effort) and rethrows. */
export async function addCniNetwork(list: CniConflist, a: CniAttachment, range?: CniAddRange): Promise<CniAddResult> {
  let prev: Record<string, unknown> | null = range?.prev ?? null;
  const done: Record<string, unknown>[] = [];
  try {
    for (const plugin of list.plugins.slice(range?.from ?? 0, range?.to ?? list.plugins.length)) {
      const out = await invokeCniPlugin(pluginConf(list, plugin, a, prev), invocation(CniCommand.Add, a));
      done.push(plugin);
      if (out) prev = out;
    }
  } catch (err) {
    await delCniNetwork({ ...list, plugins: done }, a, prev).catch(() => undefined);
    throw err;
  }
  return { address: sandboxAddress(prev, a.ifName), interfaceName: a.ifName, result: prev };
}

/**
 * Runs DEL through the list in reverse. Every plugin runs even when one fails (DEL must free
 * what it can); the first failure is thrown at the end.
 */
export async function delCniNetwork(list: CniConflist, a: CniAttachment, prev: Record<string, unknown> | null): Promise<void> {
  let first: unknown = null;
  for (const plugin of [...list.plugins].reverse()) {
    try {
      await invokeCniPlugin(pluginConf(list, plugin, a, prev), invocation(CniCommand.Del, a));
    } catch (err) {
      first ??= err;
    }
  }
  if (first) throw first;
}

/** Runs CHECK through the list: resolves when every plugin finds its part in place. */
export async function checkCniNetwork(list: CniConflist, a: CniAttachment, prev: Record<string, unknown> | null): Promise<void> {
  for (const plugin of list.plugins) await invokeCniPlugin(pluginConf(list, plugin, a, prev), invocation(CniCommand.Check, a));
}
