/**
 * Reading a Nomad agent configuration file (HCL2, or JSON when the name ends in .json) into a
 * configuration layer. Known settings: data_dir, bind_addr, datacenter, region, name,
 * log_level, log_json, log_file, log_rotate_bytes, log_rotate_duration, log_rotate_max_files,
 * enable_debug, ports { http }, server { enabled, num_schedulers, raft_snapshot_threshold, job_max_count,
 * job_max_priority, job_default_priority, heartbeat_grace, min_heartbeat_ttl, max_heartbeats_per_second,
 * failover_heartbeat_ttl, etcd { endpoints, prefix, lease_ttl, tls { ca_file, cert_file, key_file } },
 * client_introduction { enforcement, default_identity_ttl, max_identity_ttl } }, client { enabled, servers,
 * node_class, node_pool, meta, options, chroot_env, bridge_network_name, bridge_network_subnet,
 * bridge_network_hairpin_mode, cni_path, cni_config_dir, host_volume "<name>" { path, read_only },
 * host_volumes_dir, host_volume_plugin_dir },
 * acl { enabled, token_ttl, policy_ttl }, tls { http, rpc, ca_file, cert_file, key_file,
 * verify_server_hostname, verify_https_client }, plugin "<name>" { config { … } } (kept as given, for the driver
 * to read). Other Nomad settings are ignored, so existing files load.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseHcl } from '@cdktf/hcl2json';
import { AgentConfigError, type AgentConfigLayer, type HeartbeatSettings, type HostVolumeConfig } from './agent-config.js';
import type { TlsConfig } from '../tls/tls-config.js';
import type { EtcdConfig } from '../server/etcd/etcd-connection.js';
import { NANOS_PER_MS, parseDuration } from '../structs/duration.js';
import { isIntroductionEnforcement, type ClientIntroductionConfig } from '../structs/client-introduction.js';

type Obj = Record<string, unknown>;

/** hcl2json turns every block into a list of bodies; JSON configs may use a plain object. */
function block(root: Obj, name: string): Obj | undefined {
  const v = root[name];
  if (v === undefined || v === null) return undefined;
  const first = Array.isArray(v) ? v[0] : v;
  if (typeof first !== 'object' || first === null || Array.isArray(first)) throw new AgentConfigError(name, 'must be a block');
  return first as Obj;
}

function str(o: Obj, key: string, field: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new AgentConfigError(field, `must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function bool(o: Obj, key: string, field: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new AgentConfigError(field, `must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

function int(o: Obj, key: string, field: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new AgentConfigError(field, `must be an integer, got ${JSON.stringify(v)}`);
  return n;
}

/** A Go duration ("30s", "5m") in milliseconds. */
function durationMs(o: Obj, key: string, field: string): number | undefined {
  const v = str(o, key, field);
  if (v === undefined) return undefined;
  try {
    return parseDuration(v) / NANOS_PER_MS;
  } catch {
    throw new AgentConfigError(field, `must be a duration such as "30s", got ${JSON.stringify(v)}`);
  }
}

/** A string map given as an attribute (`meta = {…}`) or a block (`meta { … }`). */
function stringMap(o: Obj, key: string, field: string): Record<string, string> | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  const bodies = Array.isArray(v) ? v : [v];
  const out: Record<string, string> = {};
  for (const b of bodies) {
    if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new AgentConfigError(field, 'must be a map of strings');
    for (const [k, val] of Object.entries(b as Obj)) {
      if (typeof val === 'object' && val !== null) throw new AgentConfigError(`${field}.${k}`, 'must be a string');
      out[k] = String(val);
    }
  }
  return out;
}

/** Turns a parsed configuration tree into a layer; throws AgentConfigError naming the field. */
export function configLayerFromTree(tree: Obj, file: string): AgentConfigLayer {
  const layer: AgentConfigLayer = { files: [file] };
  const set = <K extends keyof AgentConfigLayer>(k: K, v: AgentConfigLayer[K] | undefined) => {
    if (v !== undefined) layer[k] = v;
  };
  set('dataDir', str(tree, 'data_dir', 'data_dir'));
  set('bindAddr', str(tree, 'bind_addr', 'bind_addr'));
  set('datacenter', str(tree, 'datacenter', 'datacenter'));
  set('region', str(tree, 'region', 'region'));
  set('name', str(tree, 'name', 'name'));
  set('logLevel', str(tree, 'log_level', 'log_level'));
  set('logJson', bool(tree, 'log_json', 'log_json'));
  set('logFile', str(tree, 'log_file', 'log_file'));
  set('logRotateBytes', int(tree, 'log_rotate_bytes', 'log_rotate_bytes'));
  set('logRotateDurationMs', durationMs(tree, 'log_rotate_duration', 'log_rotate_duration'));
  set('logRotateMaxFiles', int(tree, 'log_rotate_max_files', 'log_rotate_max_files'));
  set('enableDebug', bool(tree, 'enable_debug', 'enable_debug'));
  const ports = block(tree, 'ports');
  if (ports) {
    const http = int(ports, 'http', 'ports.http');
    if (http !== undefined) layer.ports = { http };
  }
  const server = block(tree, 'server');
  if (server) {
    layer.server = {};
    const enabled = bool(server, 'enabled', 'server.enabled');
    if (enabled !== undefined) layer.server.enabled = enabled;
    const n = int(server, 'num_schedulers', 'server.num_schedulers');
    if (n !== undefined) layer.server.numSchedulers = n;
    const threshold = int(server, 'raft_snapshot_threshold', 'server.raft_snapshot_threshold');
    if (threshold !== undefined) layer.server.snapshotThreshold = threshold;
    const maxCount = int(server, 'job_max_count', 'server.job_max_count');
    if (maxCount !== undefined) layer.server.jobMaxCount = maxCount;
    const maxPriority = int(server, 'job_max_priority', 'server.job_max_priority');
    if (maxPriority !== undefined) layer.server.jobMaxPriority = maxPriority;
    const defaultPriority = int(server, 'job_default_priority', 'server.job_default_priority');
    if (defaultPriority !== undefined) layer.server.jobDefaultPriority = defaultPriority;
    const heartbeat = heartbeatSettings(server);
    if (heartbeat) layer.server.heartbeat = heartbeat;
    const issuer = str(server, 'oidc_issuer', 'server.oidc_issuer');
    if (issuer !== undefined) layer.server.oidcIssuer = issuer;
    const etcd = etcdBlock(server);
    if (etcd) layer.server.etcd = etcd;
    const intro = clientIntroductionBlock(server);
    if (intro) layer.server.clientIntroduction = intro;
  }
  const client = block(tree, 'client');
  if (client) {
    layer.client = {};
    const enabled = bool(client, 'enabled', 'client.enabled');
    if (enabled !== undefined) layer.client.enabled = enabled;
    const servers = client['servers'];
    if (servers !== undefined) {
      if (!Array.isArray(servers) || servers.some((s) => typeof s !== 'string')) throw new AgentConfigError('client.servers', 'must be a list of strings');
      layer.client.servers = servers as string[];
    }
    const nodeClass = str(client, 'node_class', 'client.node_class');
    if (nodeClass !== undefined) layer.client.nodeClass = nodeClass;
    const nodePool = str(client, 'node_pool', 'client.node_pool');
    if (nodePool !== undefined) layer.client.nodePool = nodePool;
    // Nomad keeps the introduction token out of configuration files (its `hcl:"-"`), where it
    // would sit beside everything else an operator shares: say where it goes instead.
    if (client['intro_token'] !== undefined) {
      throw new AgentConfigError('client.intro_token', 'is not read from configuration files: use -client-intro-token, NOMAD_CLIENT_INTRO_TOKEN, or the file <data_dir>/client/intro_token.jwt');
    }
    const meta = stringMap(client, 'meta', 'client.meta');
    if (meta) layer.client.meta = meta;
    const options = stringMap(client, 'options', 'client.options');
    if (options) layer.client.options = options;
    const chrootEnv = stringMap(client, 'chroot_env', 'client.chroot_env');
    if (chrootEnv) layer.client.chrootEnv = chrootEnv;
    const network = clientNetworkSettings(client);
    if (network) layer.client.network = network;
    const hostVolumes = hostVolumeBlocks(client);
    if (hostVolumes) layer.client.hostVolumes = hostVolumes;
    for (const [key, field] of [['host_volumes_dir', 'hostVolumesDir'], ['host_volume_plugin_dir', 'hostVolumePluginDir']] as const) {
      const dir = str(client, key, `client.${key}`);
      if (dir === undefined) continue;
      if (!dir.startsWith('/')) throw new AgentConfigError(`client.${key}`, `must be an absolute path, got ${JSON.stringify(dir)}`);
      layer.client[field] = dir;
    }
  }
  const plugins = pluginBlocks(tree);
  if (plugins) layer.plugins = plugins;
  const acl = block(tree, 'acl');
  if (acl) {
    layer.acl = {};
    const enabled = bool(acl, 'enabled', 'acl.enabled');
    if (enabled !== undefined) layer.acl.enabled = enabled;
    const tokenTtl = durationMs(acl, 'token_ttl', 'acl.token_ttl');
    if (tokenTtl !== undefined) layer.acl.tokenTtlMs = tokenTtl;
    const policyTtl = durationMs(acl, 'policy_ttl', 'acl.policy_ttl');
    if (policyTtl !== undefined) layer.acl.policyTtlMs = policyTtl;
  }
  const tls = block(tree, 'tls');
  if (tls) {
    const t: Partial<TlsConfig> = {};
    const flag = (key: string, set: (v: boolean) => void) => {
      const v = bool(tls, key, `tls.${key}`);
      if (v !== undefined) set(v);
    };
    const file = (key: string, set: (v: string) => void) => {
      const v = str(tls, key, `tls.${key}`);
      if (v !== undefined) set(v);
    };
    flag('http', (v) => (t.http = v));
    flag('rpc', (v) => (t.rpc = v));
    flag('verify_server_hostname', (v) => (t.verifyServerHostname = v));
    flag('verify_https_client', (v) => (t.verifyHttpsClient = v));
    file('ca_file', (v) => (t.caFile = v));
    file('cert_file', (v) => (t.certFile = v));
    file('key_file', (v) => (t.keyFile = v));
    layer.tls = t;
  }
  return layer;
}

/** The client's group networking settings, with Nomad's names; undefined when none is set. */
function clientNetworkSettings(client: Obj): NonNullable<AgentConfigLayer['client']>['network'] {
  const out: NonNullable<NonNullable<AgentConfigLayer['client']>['network']> = {};
  const name = str(client, 'bridge_network_name', 'client.bridge_network_name');
  if (name !== undefined) {
    // A Linux interface name: at most 15 bytes, no '/', whitespace or ':' (iptables reads it too).
    if (!/^[A-Za-z0-9_.-]{1,15}$/.test(name)) throw new AgentConfigError('client.bridge_network_name', `${JSON.stringify(name)} is not an interface name (1-15 of A-Z a-z 0-9 _ . -)`);
    out.bridgeName = name;
  }
  const subnet = str(client, 'bridge_network_subnet', 'client.bridge_network_subnet');
  if (subnet !== undefined) {
    const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(subnet);
    if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 30) {
      throw new AgentConfigError('client.bridge_network_subnet', `${JSON.stringify(subnet)} is not an IPv4 CIDR block (e.g. "172.26.64.0/20")`);
    }
    out.bridgeSubnet = subnet;
  }
  const hairpin = bool(client, 'bridge_network_hairpin_mode', 'client.bridge_network_hairpin_mode');
  if (hairpin !== undefined) out.hairpinMode = hairpin;
  const cniPath = str(client, 'cni_path', 'client.cni_path');
  if (cniPath !== undefined) out.cniPath = cniPath.split(':').filter((p) => p !== '');
  const cniConfigDir = str(client, 'cni_config_dir', 'client.cni_config_dir');
  if (cniConfigDir !== undefined) out.cniConfigDir = cniConfigDir;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Nomad's heartbeat settings of the server block: heartbeat_grace, min_heartbeat_ttl and
 * failover_heartbeat_ttl (durations) and max_heartbeats_per_second (a number); undefined if none is set.
 */
function heartbeatSettings(server: Obj): HeartbeatSettings | undefined {
  const out: HeartbeatSettings = {};
  const grace = durationMs(server, 'heartbeat_grace', 'server.heartbeat_grace');
  if (grace !== undefined) out.graceMs = grace;
  const minTtl = durationMs(server, 'min_heartbeat_ttl', 'server.min_heartbeat_ttl');
  if (minTtl !== undefined) out.minTtlMs = minTtl;
  const failover = durationMs(server, 'failover_heartbeat_ttl', 'server.failover_heartbeat_ttl');
  if (failover !== undefined) out.failoverTtlMs = failover;
  const rate = server['max_heartbeats_per_second'];
  if (rate !== undefined && rate !== null) {
    const n = typeof rate === 'string' && rate.trim() !== '' ? Number(rate) : rate;
    if (typeof n !== 'number' || !Number.isFinite(n)) throw new AgentConfigError('server.max_heartbeats_per_second', `must be a number, got ${JSON.stringify(rate)}`);
    out.maxHeartbeatsPerSecond = n;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `server { etcd { endpoints = [...], prefix = "...", lease_ttl = "2s", tls { ... } } }`. */
function etcdBlock(server: Obj): Partial<EtcdConfig> | undefined {
  const etcd = block(server, 'etcd');
  if (!etcd) return undefined;
  const out: Partial<EtcdConfig> = {};
  const endpoints = etcd['endpoints'];
  if (endpoints !== undefined) {
    if (!Array.isArray(endpoints) || endpoints.some((s) => typeof s !== 'string')) throw new AgentConfigError('server.etcd.endpoints', 'must be a list of strings');
    out.endpoints = endpoints as string[];
  }
  const prefix = str(etcd, 'prefix', 'server.etcd.prefix');
  if (prefix !== undefined) out.prefix = prefix;
  const ttl = etcd['lease_ttl'];
  if (ttl !== undefined && ttl !== null) out.leaseTtlSeconds = seconds(ttl, 'server.etcd.lease_ttl');
  const tls = block(etcd, 'tls');
  if (tls) {
    out.tls = {};
    const ca = str(tls, 'ca_file', 'server.etcd.tls.ca_file');
    if (ca !== undefined) out.tls.caFile = ca;
    const cert = str(tls, 'cert_file', 'server.etcd.tls.cert_file');
    if (cert !== undefined) out.tls.certFile = cert;
    const key = str(tls, 'key_file', 'server.etcd.tls.key_file');
    if (key !== undefined) out.tls.keyFile = key;
  }
  return out;
}

/** `server { client_introduction { enforcement = "strict", default_identity_ttl = "5m", max_identity_ttl = "30m" } }`. */
function clientIntroductionBlock(server: Obj): Partial<ClientIntroductionConfig> | undefined {
  const b = block(server, 'client_introduction');
  if (!b) return undefined;
  const out: Partial<ClientIntroductionConfig> = {};
  const enforcement = str(b, 'enforcement', 'server.client_introduction.enforcement');
  if (enforcement !== undefined) {
    if (!isIntroductionEnforcement(enforcement)) throw new AgentConfigError('server.client_introduction.enforcement', `invalid enforcement ${JSON.stringify(enforcement)} (want "none", "warn" or "strict")`);
    out.enforcement = enforcement;
  }
  const def = durationMs(b, 'default_identity_ttl', 'server.client_introduction.default_identity_ttl');
  if (def !== undefined) out.defaultIdentityTtlMs = def;
  const max = durationMs(b, 'max_identity_ttl', 'server.client_introduction.max_identity_ttl');
  if (max !== undefined) out.maxIdentityTtlMs = max;
  return out;
}

/** A duration in whole seconds: a number, or a string such as "2s" or "2". */
function seconds(v: unknown, field: string): number {
  const m = typeof v === 'string' ? /^(\d+)s?$/.exec(v.trim()) : null;
  const n = typeof v === 'number' ? v : m ? Number(m[1]) : NaN;
  if (!Number.isInteger(n)) throw new AgentConfigError(field, `must be whole seconds such as "2s", got ${JSON.stringify(v)}`);
  return n;
}

/**
 * `plugin "docker" { config { … } }` blocks: hcl2json gives `{plugin: {docker: [{config:
 * [{…}]}]}}`, JSON configs may give plain objects. Each plugin's config body is kept whole; the
 * driver validates it and names any bad option.
 */
function pluginBlocks(tree: Obj): Record<string, Obj> | undefined {
  const v = tree['plugin'];
  if (v === undefined || v === null) return undefined;
  const out: Record<string, Obj> = {};
  for (const byName of Array.isArray(v) ? v : [v]) {
    if (typeof byName !== 'object' || byName === null || Array.isArray(byName)) throw new AgentConfigError('plugin', 'must be labelled blocks: plugin "<name>" { config { … } }');
    for (const [name, bodies] of Object.entries(byName as Obj)) {
      const body = bodies === null || bodies === undefined ? {} : block({ [name]: bodies }, name);
      const config = body ? block(body, 'config') : undefined;
      out[name] = config ?? {};
    }
  }
  return out;
}

/**
 * `client { host_volume "name" { path = "/abs" read_only = false } }` blocks (hcl2json: `{host_volume:
 * [{name: [{…}]}]}`; JSON configs may give plain objects). The path must be absolute: it is the
 * only host path a task of this client may be given through the volume.
 */
function hostVolumeBlocks(client: Obj): Record<string, HostVolumeConfig> | undefined {
  const v = client['host_volume'];
  if (v === undefined || v === null) return undefined;
  const out: Record<string, HostVolumeConfig> = {};
  for (const byName of Array.isArray(v) ? v : [v]) {
    if (typeof byName !== 'object' || byName === null || Array.isArray(byName)) throw new AgentConfigError('client.host_volume', 'must be labelled blocks: host_volume "<name>" { path = "…" }');
    for (const [name, bodies] of Object.entries(byName as Obj)) {
      const field = `client.host_volume "${name}"`;
      if (name === '') throw new AgentConfigError(field, 'name must not be empty');
      if (out[name]) throw new AgentConfigError(field, 'is given more than once');
      const body = block({ [name]: bodies }, name) ?? {};
      for (const key of Object.keys(body)) {
        if (key !== 'path' && key !== 'read_only') throw new AgentConfigError(`${field}.${key}`, 'is not a host_volume setting (path, read_only)');
      }
      const path = str(body, 'path', `${field}.path`);
      if (path === undefined || path === '') throw new AgentConfigError(`${field}.path`, 'is required');
      if (!path.startsWith('/')) throw new AgentConfigError(`${field}.path`, `must be an absolute path, got ${JSON.stringify(path)}`);
      out[name] = { path, readOnly: bool(body, 'read_only', `${field}.read_only`) ?? false };
    }
  }
  return out;
}

/** Reads one configuration file (HCL2 or JSON). */
export async function readConfigFile(path: string): Promise<AgentConfigLayer> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new AgentConfigError('config', `cannot read ${path}: ${(err as Error).message}`);
  }
  let tree: unknown;
  try {
    tree = path.endsWith('.json') ? JSON.parse(text) : await parseHcl(path, text);
  } catch (err) {
    throw new AgentConfigError('config', `cannot parse ${path}: ${(err as Error).message}`);
  }
  if (typeof tree !== 'object' || tree === null || Array.isArray(tree)) throw new AgentConfigError('config', `${path} must hold a configuration object`);
  return configLayerFromTree(tree as Obj, path);
}
