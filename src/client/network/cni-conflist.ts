/**
 * CNI network configuration lists: the one Nomad builds for `mode = "bridge"` (loopback, bridge
 * with host-local IPAM, firewall, portmap), and the ones an operator puts in `cni_config_dir`
 * for `mode = "cni/<name>"` (`.conflist` files, or single-plugin `.conf`/`.json` files).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A network configuration list (CNI spec): a name, a version and the plugins run in order. */
export interface CniConflist {
  cniVersion: string;
  name: string;
  plugins: Record<string, unknown>[];
}

/** The bridge network's settings (Nomad's client options of the same names). */
export interface BridgeNetworkOptions {
  /** `bridge_network_name`, default "nomad". */
  bridgeName: string;
  /** `bridge_network_subnet`, default 172.26.64.0/20. */
  subnet: string;
  /** `bridge_network_hairpin_mode`, default false. */
  hairpinMode: boolean;
  /** The filter chain the firewall plugin sends admin overrides to (Nomad's NOMAD-ADMIN). */
  adminChain: string;
  /** Where host-local keeps its leases; undefined for the plugin's default (/var/lib/cni/networks). */
  ipamDataDir?: string;
}

/** Nomad's defaults for the bridge network. */
export const DEFAULT_BRIDGE_NAME = 'nomad';
export const DEFAULT_BRIDGE_SUBNET = '172.26.64.0/20';
export const DEFAULT_ADMIN_CHAIN = 'NOMAD-ADMIN';

/** The conflist of bridge mode, with the same plugins and settings as Nomad's built-in one. */
export function bridgeConflist(o: BridgeNetworkOptions): CniConflist {
  const ipam: Record<string, unknown> = { type: 'host-local', ranges: [[{ subnet: o.subnet }]], routes: [{ dst: '0.0.0.0/0' }] };
  if (o.ipamDataDir) ipam['dataDir'] = o.ipamDataDir;
  return {
    cniVersion: '0.4.0',
    name: 'nomad',
    plugins: [
      { type: 'loopback' },
      { type: 'bridge', bridge: o.bridgeName, ipMasq: true, isGateway: true, forceAddress: true, hairpinMode: o.hairpinMode, ipam },
      { type: 'firewall', backend: 'iptables', iptablesAdminChainName: o.adminChain },
      { type: 'portmap', capabilities: { portMappings: true }, snat: true },
    ],
  };
}

/** Checks the shape of a parsed conflist (or single-plugin conf, turned into a list of one). */
export function parseConflist(raw: unknown, source: string): CniConflist {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${source}: not a JSON object`);
  const o = raw as Record<string, unknown>;
  const name = o['name'];
  if (typeof name !== 'string' || name === '') throw new Error(`${source}: "name" must be a non-empty string`);
  const cniVersion = typeof o['cniVersion'] === 'string' ? o['cniVersion'] : '0.4.0';
  if (Array.isArray(o['plugins'])) {
    const plugins = o['plugins'] as unknown[];
    if (plugins.length === 0) throw new Error(`${source}: "plugins" is empty`);
    plugins.forEach((p, i) => {
      if (typeof p !== 'object' || p === null || typeof (p as Record<string, unknown>)['type'] !== 'string') throw new Error(`${source}: plugins[${i}] has no "type"`);
    });
    return { cniVersion, name, plugins: plugins as Record<string, unknown>[] };
  }
  if (typeof o['type'] !== 'string') throw new Error(`${source}: neither "plugins" nor "type"`);
  const single: Record<string, unknown> = { ...o };
  delete single['name'];
  delete single['cniVersion'];
  return { cniVersion, name, plugins: [single] };
}

/**
 * The conflist named `name` in `dir` (files ending .conflist, .conf or .json, read in name
 * order, as Nomad's loader); undefined when none has that name.
 */
export async function loadConflist(dir: string, name: string): Promise<CniConflist | undefined> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => /\.(conflist|conf|json)$/.test(f)).sort();
  } catch {
    return undefined;
  }
  for (const f of files) {
    const path = join(dir, f);
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(path, 'utf8'));
    } catch {
      continue;
    }
    if ((raw as { name?: unknown } | null)?.name !== name) continue;
    return parseConflist(raw, path);
  }
  return undefined;
}
