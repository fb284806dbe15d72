/**
 * The agent's configuration: which roles it runs (server, client, or both with -dev), where it
 * keeps data, where it listens, and what the client advertises. Built from defaults, then
 * config files (`-config`, later files win), then command-line flags, as Nomad does.
 */
import { CaravanError } from '../structs/caravan-error.js';
import { defaultTlsConfig, validateTlsConfig, type TlsConfig } from '../tls/tls-config.js';
import { hostname } from 'node:os';
import { DEFAULT_JOB_MAX_PRIORITY, DEFAULT_JOB_PRIORITY, JOB_PRIORITY_CEILING } from '../structs/job-defaults.js';
import type { EtcdConfig } from '../server/etcd/etcd-connection.js';
import type { ServerConfig as ServerTuning } from '../server/server-config.js';
import { DEFAULT_LOG_ROTATE_DURATION_MS } from './log-file.js';
import { envDenylistProblem } from '../client/taskenv/host-env.js';
import { clientIntroductionConfigProblem, defaultClientIntroductionConfig, type ClientIntroductionConfig } from '../structs/client-introduction.js';

/** The server block of the agent configuration. */
export interface ServerConfig {
  enabled: boolean;
  /** Scheduler workers (Nomad's num_schedulers); null: one per core. 0 schedules nothing. */
  numSchedulers: number | null;
  /**
   * `server { etcd { … } }`: the replicated log and leadership on etcd, for several servers.
   * Absent: the embedded SQLite log in the data dir (a single server, and -dev).
   */
  etcd?: EtcdConfig;
  /** `raft_snapshot_threshold` (Nomad's name): log entries between state snapshots; undefined for the server's default. */
  snapshotThreshold?: number;
  /** `client_introduction { enforcement, default_identity_ttl, max_identity_ttl }` (Nomad's; default enforcement "warn"). */
  clientIntroduction: ClientIntroductionConfig;
  /** `oidc_issuer` (Nomad's): the `iss` of workload identities and the OIDC discovery document's issuer; undefined for none. */
  oidcIssuer?: string;
  /**
   * Nomad's heartbeat_grace, min_heartbeat_ttl, max_heartbeats_per_second and failover_heartbeat_ttl;
   * a setting left out keeps the server's default (10 s, 10 s, 50, 5 min).
   */
  heartbeat?: HeartbeatSettings;
  /** `job_max_count`: the most a job's group counts may sum to (0: no limit); undefined for Nomad's 50,000. */
  jobMaxCount?: number;
  /** `job_max_priority`: the highest job priority admitted, 100..32766; undefined (or 0) for Nomad's 100. */
  jobMaxPriority?: number;
  /** `job_default_priority`: the priority of a job that states none, 50..job_max_priority-1; undefined (or 0) for 50. */
  jobDefaultPriority?: number;
}

/** The heartbeat settings of the server block, in the server's own terms (ServerConfig.heartbeat). */
export type HeartbeatSettings = NonNullable<ServerTuning['heartbeat']>;

/** The client block of the agent configuration. */
export interface ClientConfig {
  enabled: boolean;
  /** Server HTTP addresses ("host:port") a client-only agent talks to. */
  servers: string[];
  nodeClass: string;
  /** `node_pool` (Nomad's; default "default"): the pool the node registers in. */
  nodePool: string;
  /**
   * The introduction token the client presents when it first registers. As Nomad's, never
   * read from a configuration file: `-client-intro-token`, else NOMAD_CLIENT_INTRO_TOKEN
   * (CARAVAN_CLIENT_INTRO_TOKEN first), else the file `<data_dir>/client/intro_token.jwt`.
   */
  introToken?: string;
  meta: Record<string, string>;
  options: Record<string, string>;
  /** `chroot_env`: host path → path inside exec tasks; undefined for Nomad's default. */
  chrootEnv?: Record<string, string>;
  /**
   * Group networking: `bridge_network_name`, `bridge_network_subnet`, `bridge_network_hairpin_mode`,
   * `cni_path` (':'-separated), `cni_config_dir`; Nomad's defaults for what is not set.
   */
  network?: { bridgeName?: string; bridgeSubnet?: string; hairpinMode?: boolean; cniPath?: string[]; cniConfigDir?: string };
  /** `host_volume "<name>" { path read_only }` blocks: the host paths tasks may mount, by name. */
  hostVolumes?: Record<string, HostVolumeConfig>;
  /** `host_volumes_dir` (Nomad's): where dynamic host volumes are made; default `<data_dir>/host_volumes`. */
  hostVolumesDir?: string;
  /** `host_volume_plugin_dir` (Nomad's): host volume plugins found by name; default `<data_dir>/host_volume_plugins`. */
  hostVolumePluginDir?: string;
}

/** One `host_volume` block of the client configuration. */
export interface HostVolumeConfig {
  /** Absolute host path. */
  path: string;
  readOnly: boolean;
}

/** The complete, validated agent configuration. */
export interface AgentConfig {
  dev: boolean;
  name: string;
  region: string;
  datacenter: string;
  /** Data directory; undefined in -dev mode means "a temporary one". */
  dataDir: string | undefined;
  bindAddr: string;
  ports: { http: number };
  logLevel: string;
  /** `log_json`: the agent's log as JSON lines instead of Nomad's text lines. */
  logJson: boolean;
  /** `log_file`: also write the log there (rotated); undefined for stderr only. */
  logFile?: string;
  /** `log_rotate_bytes`: rotate the log file at this size; 0 for no limit. */
  logRotateBytes: number;
  /** `log_rotate_duration` in ms: rotate the log file at this age (Nomad's default 24h). */
  logRotateDurationMs: number;
  /** `log_rotate_max_files`: rotated files kept; 0 keeps all. */
  logRotateMaxFiles: number;
  /**
   * `enable_debug`: with ACLs off, the /v1/agent/pprof profiles are served only when this is
   * set (with ACLs on, agent:write decides). -dev sets it, as Nomad's -dev does.
   */
  enableDebug: boolean;
  server: ServerConfig;
  client: ClientConfig;
  /** Task driver plugin settings: the body of each `plugin "<name>" { config { … } }` block. */
  plugins: Record<string, Record<string, unknown>>;
  /** Files the configuration was read from, in order. */
  files: string[];
  /** Nomad's `acl { enabled, token_ttl, policy_ttl }` (TTLs in ms: how long a client caches a resolved token). */
  acl: AclConfig;
  /** Nomad's `tls { http, rpc, ca_file, cert_file, key_file, verify_server_hostname, verify_https_client }`. */
  tls: TlsConfig;
}

/** The `acl` block. */
export interface AclConfig {
  enabled: boolean;
  tokenTtlMs: number;
  policyTtlMs: number;
}

/** A partial configuration as a file or the flags give it; later layers override earlier ones. */
export interface AgentConfigLayer {
  dev?: boolean;
  name?: string;
  region?: string;
  datacenter?: string;
  dataDir?: string;
  bindAddr?: string;
  ports?: { http?: number };
  logLevel?: string;
  logJson?: boolean;
  logFile?: string;
  logRotateBytes?: number;
  logRotateDurationMs?: number;
  logRotateMaxFiles?: number;
  enableDebug?: boolean;
  server?: Partial<Omit<ServerConfig, 'etcd' | 'clientIntroduction'>> & { etcd?: Partial<EtcdConfig>; clientIntroduction?: Partial<ClientIntroductionConfig> };
  client?: Partial<ClientConfig>;
  plugins?: Record<string, Record<string, unknown>>;
  files?: string[];
  acl?: Partial<AclConfig>;
  tls?: Partial<TlsConfig>;
}

/** A configuration problem; `field` names the setting (e.g. "ports.http"). */
export class AgentConfigError extends CaravanError<'AGENT_CONFIG_INVALID'> {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super('AGENT_CONFIG_INVALID', { field, reason });
    this.name = 'AgentConfigError';
  }
}

/**
 * Nomad's defaults: region "global", datacenter "dc1", HTTP port 4646. Safe by default: bound to
 * loopback unless `bind_addr` (or -bind) says otherwise, and raw_exec off unless enabled.
 */
export function defaultAgentConfig(): AgentConfig {
  return {
    dev: false,
    name: hostname(),
    region: 'global',
    datacenter: 'dc1',
    dataDir: undefined,
    bindAddr: '127.0.0.1',
    ports: { http: 4646 },
    logLevel: 'info',
    logJson: false,
    logRotateBytes: 0,
    logRotateDurationMs: DEFAULT_LOG_ROTATE_DURATION_MS,
    logRotateMaxFiles: 0,
    enableDebug: false,
    server: { enabled: false, numSchedulers: null, clientIntroduction: defaultClientIntroductionConfig() },
    client: { enabled: false, servers: [], nodeClass: '', nodePool: 'default', meta: {}, options: {} },
    plugins: {},
    files: [],
    acl: { enabled: false, tokenTtlMs: 30_000, policyTtlMs: 30_000 },
    tls: defaultTlsConfig(),
  };
}

/**
 * The layer -dev implies: both roles, loopback, debug logs, raw_exec enabled as Nomad's -dev
 * does, and the mock driver, which Nomad builds only into dev and test binaries (files and flags
 * may still override; a file's `plugin "raw_exec"` or `plugin "mock_driver"` block replaces
 * this one's).
 */
export function devLayer(): AgentConfigLayer {
  return {
    dev: true,
    bindAddr: '127.0.0.1',
    logLevel: 'debug',
    enableDebug: true,
    server: { enabled: true },
    client: { enabled: true },
    plugins: { raw_exec: { enabled: true }, mock_driver: { enabled: true } },
  };
}

/** Applies `layer` over `base` (maps merge key by key; lists replace). */
export function mergeConfig(base: AgentConfig, layer: AgentConfigLayer): AgentConfig {
  const def = <T>(v: T | undefined, d: T): T => (v === undefined ? d : v);
  return {
    dev: def(layer.dev, base.dev),
    name: def(layer.name, base.name),
    region: def(layer.region, base.region),
    datacenter: def(layer.datacenter, base.datacenter),
    dataDir: def(layer.dataDir, base.dataDir),
    bindAddr: def(layer.bindAddr, base.bindAddr),
    ports: { http: def(layer.ports?.http, base.ports.http) },
    logLevel: def(layer.logLevel, base.logLevel),
    logJson: def(layer.logJson, base.logJson),
    ...((layer.logFile ?? base.logFile) !== undefined ? { logFile: layer.logFile ?? base.logFile } : {}),
    logRotateBytes: def(layer.logRotateBytes, base.logRotateBytes),
    logRotateDurationMs: def(layer.logRotateDurationMs, base.logRotateDurationMs),
    logRotateMaxFiles: def(layer.logRotateMaxFiles, base.logRotateMaxFiles),
    enableDebug: def(layer.enableDebug, base.enableDebug),
    server: {
      enabled: def(layer.server?.enabled, base.server.enabled),
      numSchedulers: def(layer.server?.numSchedulers, base.server.numSchedulers),
      clientIntroduction: { ...base.server.clientIntroduction, ...layer.server?.clientIntroduction },
      ...((layer.server?.etcd ?? base.server.etcd) ? { etcd: mergeEtcd(base.server.etcd, layer.server?.etcd) } : {}),
      ...((layer.server?.snapshotThreshold ?? base.server.snapshotThreshold) !== undefined
        ? { snapshotThreshold: layer.server?.snapshotThreshold ?? base.server.snapshotThreshold }
        : {}),
      ...mergeJobLimits(base.server, layer.server),
      ...(layer.server?.heartbeat || base.server.heartbeat ? { heartbeat: { ...base.server.heartbeat, ...layer.server?.heartbeat } } : {}),
      ...((layer.server?.oidcIssuer ?? base.server.oidcIssuer) !== undefined ? { oidcIssuer: layer.server?.oidcIssuer ?? base.server.oidcIssuer } : {}),
    },
    client: {
      enabled: def(layer.client?.enabled, base.client.enabled),
      servers: def(layer.client?.servers, base.client.servers),
      nodeClass: def(layer.client?.nodeClass, base.client.nodeClass),
      nodePool: def(layer.client?.nodePool, base.client.nodePool),
      ...((layer.client?.introToken ?? base.client.introToken) !== undefined ? { introToken: layer.client?.introToken ?? base.client.introToken } : {}),
      meta: { ...base.client.meta, ...layer.client?.meta },
      options: { ...base.client.options, ...layer.client?.options },
      ...((layer.client?.chrootEnv ?? base.client.chrootEnv) ? { chrootEnv: layer.client?.chrootEnv ?? base.client.chrootEnv } : {}),
      ...(layer.client?.network || base.client.network ? { network: { ...base.client.network, ...layer.client?.network } } : {}),
      // Later files add volumes; a name given again replaces the earlier block, as Nomad merges them.
      ...(layer.client?.hostVolumes || base.client.hostVolumes ? { hostVolumes: { ...base.client.hostVolumes, ...layer.client?.hostVolumes } } : {}),
      ...((layer.client?.hostVolumesDir ?? base.client.hostVolumesDir) !== undefined ? { hostVolumesDir: layer.client?.hostVolumesDir ?? base.client.hostVolumesDir } : {}),
      ...((layer.client?.hostVolumePluginDir ?? base.client.hostVolumePluginDir) !== undefined ? { hostVolumePluginDir: layer.client?.hostVolumePluginDir ?? base.client.hostVolumePluginDir } : {}),
    },
    // A later file's plugin block replaces an earlier one's for the same plugin, as in Nomad.
    plugins: { ...base.plugins, ...layer.plugins },
    files: [...base.files, ...(layer.files ?? [])],
    acl: { ...base.acl, ...layer.acl },
    tls: { ...base.tls, ...layer.tls },
  };
}

/** Nomad's bounds on the heartbeat settings: positive TTLs and rate, a grace of zero or more. */
function validateHeartbeat(h: HeartbeatSettings | undefined): void {
  if (!h) return;
  const positive: [keyof HeartbeatSettings, string][] = [
    ['minTtlMs', 'server.min_heartbeat_ttl'],
    ['failoverTtlMs', 'server.failover_heartbeat_ttl'],
    ['maxHeartbeatsPerSecond', 'server.max_heartbeats_per_second'],
  ];
  for (const [key, field] of positive) {
    const v = h[key];
    if (v !== undefined && !(v > 0)) throw new AgentConfigError(field, `must be greater than zero, got ${String(key === 'maxHeartbeatsPerSecond' ? v : `${v}ms`)}`);
  }
  if (h.graceMs !== undefined && !(h.graceMs >= 0)) throw new AgentConfigError('server.heartbeat_grace', `must not be negative, got ${h.graceMs}ms`);
}

type JobLimitFields = Pick<ServerConfig, 'jobMaxCount' | 'jobMaxPriority' | 'jobDefaultPriority'>;

/** The job limits a layer sets over the base's; a limit neither sets stays absent. */
function mergeJobLimits(base: JobLimitFields, layer: Partial<JobLimitFields> | undefined): JobLimitFields {
  const out: JobLimitFields = {};
  const maxCount = layer?.jobMaxCount ?? base.jobMaxCount;
  const maxPriority = layer?.jobMaxPriority ?? base.jobMaxPriority;
  const defaultPriority = layer?.jobDefaultPriority ?? base.jobDefaultPriority;
  if (maxCount !== undefined) out.jobMaxCount = maxCount;
  if (maxPriority !== undefined) out.jobMaxPriority = maxPriority;
  if (defaultPriority !== undefined) out.jobDefaultPriority = defaultPriority;
  return out;
}

/**
 * Checks the job limits as Nomad's agent does: job_max_count a non-negative whole number (0 for
 * no limit), job_max_priority 100..32766 and job_default_priority 50..job_max_priority-1, 0
 * meaning the default for both. Throws AgentConfigError naming the option.
 */
function validateJobLimits(s: ServerConfig): void {
  if (s.jobMaxCount !== undefined && (!Number.isSafeInteger(s.jobMaxCount) || s.jobMaxCount < 0)) {
    throw new AgentConfigError('server.job_max_count', `must be a non-negative whole number (0 for no limit), got ${String(s.jobMaxCount)}`);
  }
  const maxPriority = s.jobMaxPriority || DEFAULT_JOB_MAX_PRIORITY;
  if (!Number.isInteger(maxPriority) || maxPriority < DEFAULT_JOB_MAX_PRIORITY || maxPriority > JOB_PRIORITY_CEILING) {
    throw new AgentConfigError('server.job_max_priority', `job_max_priority cannot be ${String(s.jobMaxPriority)}. Must be between ${DEFAULT_JOB_MAX_PRIORITY} and ${JOB_PRIORITY_CEILING}`);
  }
  const defaultPriority = s.jobDefaultPriority || DEFAULT_JOB_PRIORITY;
  if (!Number.isInteger(defaultPriority) || defaultPriority < DEFAULT_JOB_PRIORITY || defaultPriority >= maxPriority) {
    throw new AgentConfigError('server.job_default_priority', `job_default_priority cannot be ${String(s.jobDefaultPriority)}. Must be between ${DEFAULT_JOB_PRIORITY} and ${maxPriority}`);
  }
}

/** A later etcd block overrides an earlier one's settings one by one (the flags give only some). */
function mergeEtcd(base: EtcdConfig | undefined, layer: Partial<EtcdConfig> | undefined): EtcdConfig {
  const merged: EtcdConfig = { ...base, ...layer, endpoints: layer?.endpoints ?? base?.endpoints ?? [] };
  const tls = { ...base?.tls, ...layer?.tls };
  if (Object.keys(tls).length > 0) merged.tls = tls;
  return merged;
}

/** Checks the etcd block; throws AgentConfigError naming the field. */
function validateEtcd(e: EtcdConfig): void {
  if (e.endpoints.length === 0) throw new AgentConfigError('server.etcd.endpoints', 'at least one etcd endpoint is required');
  for (const ep of e.endpoints) {
    if (!/^https?:\/\/[^\s/:]+(:\d+)?\/?$/.test(ep)) {
      throw new AgentConfigError('server.etcd.endpoints', `invalid endpoint ${JSON.stringify(ep)} (expected http://host:port or https://host:port)`);
    }
  }
  if (e.prefix !== undefined && !e.prefix.startsWith('/')) throw new AgentConfigError('server.etcd.prefix', `must start with "/", got ${JSON.stringify(e.prefix)}`);
  if (e.leaseTtlSeconds !== undefined && (!Number.isInteger(e.leaseTtlSeconds) || e.leaseTtlSeconds < 1 || e.leaseTtlSeconds > 60)) {
    throw new AgentConfigError('server.etcd.lease_ttl', `must be whole seconds between 1 and 60, got ${String(e.leaseTtlSeconds)}`);
  }
  if (e.tls && (e.tls.certFile !== undefined) !== (e.tls.keyFile !== undefined)) {
    throw new AgentConfigError('server.etcd.tls', 'cert_file and key_file go together');
  }
  if (e.tls && (e.tls.certFile !== undefined || e.tls.keyFile !== undefined) && e.tls.caFile === undefined) {
    throw new AgentConfigError('server.etcd.tls.ca_file', 'required with a client certificate');
  }
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];

/** Checks a merged configuration; throws AgentConfigError naming the first bad field. */
export function validateAgentConfig(c: AgentConfig): AgentConfig {
  if (!c.server.enabled && !c.client.enabled) {
    throw new AgentConfigError('server.enabled', 'must specify either server, client or dev mode for the agent');
  }
  if (!c.dev && c.dataDir === undefined) throw new AgentConfigError('data_dir', 'must be set when not in -dev mode');
  if (!Number.isInteger(c.ports.http) || c.ports.http < 0 || c.ports.http > 65535) {
    throw new AgentConfigError('ports.http', `invalid port ${String(c.ports.http)}`);
  }
  if (c.client.enabled && !c.server.enabled && c.client.servers.length === 0) {
    throw new AgentConfigError('client.servers', 'a client-only agent needs -servers (or client { servers = [...] })');
  }
  for (const s of c.client.servers) {
    if (!/^[^\s:]+(:\d+)?$/.test(s.replace(/^https?:\/\//, ''))) throw new AgentConfigError('client.servers', `invalid server address ${JSON.stringify(s)}`);
  }
  if (c.server.numSchedulers !== null && (!Number.isInteger(c.server.numSchedulers) || c.server.numSchedulers < 0)) {
    throw new AgentConfigError('server.num_schedulers', `invalid value ${String(c.server.numSchedulers)}`);
  }
  if (c.server.snapshotThreshold !== undefined && (!Number.isInteger(c.server.snapshotThreshold) || c.server.snapshotThreshold < 1)) {
    throw new AgentConfigError('server.raft_snapshot_threshold', `must be a positive integer, got ${String(c.server.snapshotThreshold)}`);
  }
  if (c.server.oidcIssuer !== undefined && !/^https?:\/\/[^\s/]+/.test(c.server.oidcIssuer)) {
    throw new AgentConfigError('server.oidc_issuer', `must be an http(s) URL, got ${JSON.stringify(c.server.oidcIssuer)}`);
  }
  const intro = clientIntroductionConfigProblem(c.server.clientIntroduction);
  if (intro) throw new AgentConfigError(`server.client_introduction.${intro[0]}`, intro[1]);
  if (c.client.nodePool === '' || c.client.nodePool === 'all') {
    throw new AgentConfigError('client.node_pool', `invalid node pool ${JSON.stringify(c.client.nodePool)} (a node cannot be in "all" or in no pool)`);
  }
  // Checked here too, so that an agent with a mistyped list exits at start, not when the client opens.
  const envDenylist = envDenylistProblem(c.client.options);
  if (envDenylist) throw new AgentConfigError(`client.options[${JSON.stringify(envDenylist[0])}]`, envDenylist[1]);
  validateJobLimits(c.server);
  validateHeartbeat(c.server.heartbeat);
  if (c.server.etcd) {
    if (c.dev) throw new AgentConfigError('server.etcd', '-dev keeps the embedded log; etcd is for a cluster of servers');
    validateEtcd(c.server.etcd);
  }
  if (!LOG_LEVELS.includes(c.logLevel.toLowerCase())) throw new AgentConfigError('log_level', `unknown level ${JSON.stringify(c.logLevel)}`);
  if (!Number.isSafeInteger(c.logRotateBytes) || c.logRotateBytes < 0) throw new AgentConfigError('log_rotate_bytes', `must be a non-negative whole number of bytes, got ${String(c.logRotateBytes)}`);
  if (!Number.isFinite(c.logRotateDurationMs) || c.logRotateDurationMs <= 0) throw new AgentConfigError('log_rotate_duration', `must be a positive duration such as "24h", got ${String(c.logRotateDurationMs)} ms`);
  if (!Number.isSafeInteger(c.logRotateMaxFiles)) throw new AgentConfigError('log_rotate_max_files', `must be a whole number, got ${String(c.logRotateMaxFiles)}`);
  validateTlsConfig(c.tls);
  // The drivers that run tasks (or exec'd commands) on the host unisolated are off unless enabled.
  for (const plugin of ['raw_exec', 'mock_driver']) {
    const enabled = c.plugins[plugin]?.['enabled'];
    if (enabled !== undefined && typeof enabled !== 'boolean') {
      throw new AgentConfigError(`plugin.${plugin}.config.enabled`, `must be a boolean, got ${JSON.stringify(enabled)}`);
    }
  }
  if (c.region === '') throw new AgentConfigError('region', 'must not be empty');
  if (c.datacenter === '') throw new AgentConfigError('datacenter', 'must not be empty');
  return { ...c, logLevel: c.logLevel.toLowerCase() };
}
