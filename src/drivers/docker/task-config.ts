/**
 * Nomad's docker task config (`config { image = "…" … }`), validated against what the plugin
 * config allows and turned into the Engine API's container-create body. Options that are not
 * allowed (privileged, a runtime, a capability, host volumes, host namespaces, unconfined
 * security options, host-wide sysctls) are refused with a message naming the option, as Nomad
 * does (confinement-options.ts).
 */
import { cpus } from 'node:os';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { TaskConfig } from '../driver.js';
import {
  badConfig,
  blockOf,
  blocksOf,
  boolOf,
  durationMsOf,
  intOf,
  refuseUnknown,
  strListOf,
  strMapOf,
  strOf,
  type Obj,
} from './config-values.js';
import { capName, type DockerPluginConfig } from './plugin-config.js';
import { checkNamespaceMode, checkSecurityOpts, checkSysctls } from './confinement-options.js';
import { checkGroupNetworkOptions, groupNameMounts, sandboxNetworkMode } from './sandbox-join.js';
import { MEMORY_MAX_UNLIMITED } from '../../structs/resources.js';

/** Labels that name a container's alloc and task: how containers are found again after a restart. */
export const LABEL_ALLOC_ID = 'com.hashicorp.nomad.alloc_id';
export const LABEL_TASK_NAME = 'com.hashicorp.nomad.task_name';
export const LABEL_JOB_NAME = 'com.hashicorp.nomad.job_name';
export const LABEL_GROUP_NAME = 'com.hashicorp.nomad.task_group_name';

/** Registry credentials (`auth { … }`), sent as X-Registry-Auth on pull. */
export interface RegistryAuth {
  username?: string;
  password?: string;
  email?: string;
  serveraddress?: string;
}

/** A validated task config, ready to create the container. */
export interface DockerTask {
  image: string;
  forcePull: boolean;
  auth: RegistryAuth | null;
  pullTimeoutMs: number;
  /** The body of POST /containers/create. */
  create: Obj;
}

const KNOWN = [
  'image', 'command', 'args', 'entrypoint', 'network_mode', 'ports', 'port_map', 'labels', 'hostname', 'work_dir',
  'volumes', 'volume_driver', 'mount', 'privileged', 'cap_add', 'cap_drop', 'runtime', 'force_pull', 'init', 'pids_limit',
  'readonly_rootfs', 'shm_size', 'ulimit', 'extra_hosts', 'dns_servers', 'dns_search_domains', 'dns_options', 'auth',
  'auth_soft_fail', 'security_opt', 'cpu_hard_limit', 'cpu_cfs_period', 'memory_hard_limit', 'oom_score_adj', 'sysctl',
  'ipc_mode', 'pid_mode', 'uts_mode', 'userns_mode', 'group_add', 'storage_opt', 'mac_address', 'cpuset_cpus',
  'image_pull_timeout', 'interactive', 'tty', 'logging', 'healthchecks', 'network_aliases',
];

const NETWORK_MODES = /^(none|host|bridge|default|container:.+|[A-Za-z0-9][A-Za-z0-9_.-]*)$/;

/** The container name Nomad uses: `<task>-<allocId>`. */
export function containerName(allocId: string, taskName: string): string {
  return `${taskName}-${allocId}`;
}

/** Splits `image[:tag]` (the tag defaults to `latest`; a registry port is not a tag). */
export function splitImage(image: string): { repo: string; tag: string } {
  if (image.includes('@')) return { repo: image, tag: '' };
  const slash = image.lastIndexOf('/');
  const colon = image.lastIndexOf(':');
  if (colon > slash) return { repo: image.slice(0, colon), tag: image.slice(colon + 1) };
  return { repo: image, tag: 'latest' };
}

/** The task's environment inside the container: Nomad's dirs at their container paths. */
function containerEnv(env: Record<string, string>): string[] {
  const e = { ...env, NOMAD_ALLOC_DIR: '/alloc', NOMAD_TASK_DIR: '/local', NOMAD_SECRETS_DIR: '/secrets' };
  return Object.entries(e).map(([k, v]) => `${k}=${v}`);
}

/** A host path of a volume or bind mount: relative ones live in the task dir and may not leave the alloc dir. */
function hostPath(src: string, field: string, cfg: TaskConfig, plugin: DockerPluginConfig): string {
  if (isAbsolute(src)) {
    if (!plugin.volumesEnabled) throw badConfig(field, `mounts host path ${JSON.stringify(src)} but volumes are not enabled on this client (plugin "docker" { config { volumes { enabled = true } } })`);
    return src;
  }
  const p = resolve(cfg.dirs.dir, src);
  const allocDir = dirname(cfg.dirs.dir);
  const rel = relative(allocDir, p);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    if (!plugin.volumesEnabled) throw badConfig(field, `path ${JSON.stringify(src)} leaves the allocation directory and volumes are not enabled`);
  }
  return p;
}

function parseVolumes(o: Obj, cfg: TaskConfig, plugin: DockerPluginConfig): string[] {
  const vols = strListOf(o, 'volumes', 'volumes') ?? [];
  const driver = strOf(o, 'volume_driver', 'volume_driver');
  if (driver && !plugin.volumesEnabled) throw badConfig('volume_driver', 'needs volumes enabled on this client');
  return vols.map((v, i) => {
    const parts = v.split(':');
    if (parts.length < 2 || parts.length > 3 || !parts[0] || !parts[1]) throw badConfig(`volumes[${i}]`, `must be "host_path:container_path[:mode]", got ${JSON.stringify(v)}`);
    const src = driver ? parts[0] : hostPath(parts[0], `volumes[${i}]`, cfg, plugin);
    return [src, ...parts.slice(1)].join(':');
  });
}

/** Docker's bind propagation for Nomad's volume_mount propagation modes. */
const BIND_PROPAGATION: Record<string, string> = { private: 'rprivate', 'host-to-task': 'rslave', bidirectional: 'rshared' };

/**
 * The task's host volumes (resolved by the client from its own host_volume configuration, so
 * not subject to the plugin's `volumes { enabled }`, which governs paths the job names) as bind
 * mounts. A bind mount of a missing source fails rather than creating it, as it should.
 */
function hostVolumeMounts(cfg: TaskConfig): Obj[] {
  return (cfg.mounts ?? []).map((m) => ({
    Type: 'bind',
    Source: m.hostPath,
    Target: m.taskPath,
    ReadOnly: m.readOnly,
    BindOptions: { Propagation: BIND_PROPAGATION[m.propagationMode] ?? 'rprivate' },
  }));
}

function parseMounts(o: Obj, cfg: TaskConfig, plugin: DockerPluginConfig): Obj[] {
  return blocksOf(o, 'mount', 'mount').map((m, i) => {
    const f = `mount[${i}]`;
    refuseUnknown(m, ['type', 'target', 'source', 'readonly', 'bind_options', 'tmpfs_options', 'volume_options'], `${f}.`);
    const type = strOf(m, 'type', `${f}.type`) ?? 'volume';
    const target = strOf(m, 'target', `${f}.target`);
    if (!target) throw badConfig(`${f}.target`, 'is required');
    const out: Obj = { Type: type, Target: target, ReadOnly: boolOf(m, 'readonly', `${f}.readonly`) ?? false };
    const source = strOf(m, 'source', `${f}.source`) ?? '';
    if (type === 'bind') {
      if (!source) throw badConfig(`${f}.source`, 'is required for a bind mount');
      out.Source = hostPath(source, `${f}.source`, cfg, plugin);
      const bo = blockOf(m, 'bind_options', `${f}.bind_options`);
      if (bo) out.BindOptions = { Propagation: strOf(bo, 'propagation', `${f}.bind_options.propagation`) ?? 'rprivate' };
    } else if (type === 'volume') {
      if (!plugin.volumesEnabled) throw badConfig(`${f}.type`, '"volume" needs volumes enabled on this client');
      out.Source = source;
      const vo = blockOf(m, 'volume_options', `${f}.volume_options`);
      if (vo) out.VolumeOptions = { NoCopy: boolOf(vo, 'no_copy', `${f}.volume_options.no_copy`) ?? false, Labels: strMapOf(vo, 'labels', `${f}.volume_options.labels`) ?? {} };
    } else if (type === 'tmpfs') {
      const to = blockOf(m, 'tmpfs_options', `${f}.tmpfs_options`);
      if (to) {
        const size = intOf(to, 'size', `${f}.tmpfs_options.size`);
        const mode = intOf(to, 'mode', `${f}.tmpfs_options.mode`);
        out.TmpfsOptions = { ...(size !== undefined ? { SizeBytes: size } : {}), ...(mode !== undefined ? { Mode: mode } : {}) };
      }
    } else {
      throw badConfig(`${f}.type`, `must be "bind", "volume" or "tmpfs", got ${JSON.stringify(type)}`);
    }
    return out;
  });
}

/** `ports = ["http"]` (and the legacy `port_map`): the group's ports by label, from the task env. */
function parsePorts(o: Obj, env: Record<string, string>): { exposed: Obj; bindings: Obj } {
  const labels = strListOf(o, 'ports', 'ports') ?? [];
  const portMap = strMapOf(o, 'port_map', 'port_map') ?? {};
  const exposed: Obj = {};
  const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
  const add = (label: string, field: string, containerPort?: number) => {
    const key = label.replace(/[^A-Za-z0-9_]/g, '_');
    const hostPort = env[`NOMAD_HOST_PORT_${key}`];
    if (hostPort === undefined) throw badConfig(field, `names port ${JSON.stringify(label)}, which the group's network block does not define`);
    const to = containerPort ?? Number(env[`NOMAD_PORT_${key}`] ?? hostPort);
    const hostIp = env[`NOMAD_HOST_IP_${key}`] ?? '';
    for (const proto of ['tcp', 'udp']) {
      exposed[`${to}/${proto}`] = {};
      (bindings[`${to}/${proto}`] ??= []).push({ HostIp: hostIp, HostPort: hostPort });
    }
  };
  labels.forEach((l, i) => add(l, `ports[${i}]`));
  for (const [label, port] of Object.entries(portMap)) {
    const n = Number(port);
    if (!Number.isInteger(n) || n <= 0) throw badConfig(`port_map.${label}`, 'must be a port number');
    add(label, `port_map.${label}`, n);
  }
  return { exposed, bindings };
}

function parseUlimits(o: Obj): Obj[] {
  const m = strMapOf(o, 'ulimit', 'ulimit') ?? {};
  return Object.entries(m).map(([name, v]) => {
    const mm = /^(\d+)(?::(\d+))?$/.exec(v.trim());
    if (!mm) throw badConfig(`ulimit.${name}`, `must be "soft" or "soft:hard", got ${JSON.stringify(v)}`);
    const soft = Number(mm[1]);
    const hard = mm[2] !== undefined ? Number(mm[2]) : soft;
    if (hard < soft) throw badConfig(`ulimit.${name}`, 'hard limit must not be below the soft limit');
    return { Name: name, Soft: soft, Hard: hard };
  });
}

function parseAuth(o: Obj): RegistryAuth | null {
  const a = blockOf(o, 'auth', 'auth');
  if (!a) return null;
  refuseUnknown(a, ['username', 'password', 'email', 'server_address'], 'auth.');
  return {
    username: strOf(a, 'username', 'auth.username'),
    password: strOf(a, 'password', 'auth.password'),
    email: strOf(a, 'email', 'auth.email'),
    serveraddress: strOf(a, 'server_address', 'auth.server_address'),
  };
}

function checkCaps(list: string[] | undefined, field: string, plugin: DockerPluginConfig): string[] | undefined {
  if (!list) return undefined;
  const allowed = new Set(plugin.allowCaps);
  for (const [i, c] of list.entries()) {
    const n = capName(c);
    if (field === 'cap_add' && !allowed.has('all') && !allowed.has(n) && n !== 'all') {
      throw badConfig(`${field}[${i}]`, `asks for capability ${JSON.stringify(c)}, which this client does not allow (allow_caps)`);
    }
    if (field === 'cap_add' && n === 'all' && !allowed.has('all')) throw badConfig(`${field}[${i}]`, 'asks for all capabilities, which this client does not allow (allow_caps)');
  }
  return list.map((c) => (capName(c) === 'all' ? 'ALL' : `CAP_${capName(c).toUpperCase()}`));
}

/** CPU quota for `cpu_hard_limit`, as Nomad computes it: the task's share of the node's compute. */
function cpuQuota(cpuShares: number, periodUs: number): number {
  const list = cpus();
  const cores = Math.max(1, list.length);
  const mhz = list[0]?.speed || 1000;
  const total = mhz * cores;
  return Math.max(1000, Math.round((cpuShares / total) * periodUs * cores));
}

/**
 * Validates a task's docker config against the plugin config; throws DriverError naming the
 * option. `extraLabels` (the creating client's id) are added to the container's labels.
 */
export function parseDockerTask(cfg: TaskConfig, plugin: DockerPluginConfig, extraLabels: Record<string, string> = {}): DockerTask {
  const o = cfg.driverConfig ?? {};
  refuseUnknown(o, KNOWN, '');
  const image = strOf(o, 'image', 'image');
  if (!image || image.trim() === '') throw badConfig('image', 'is required');

  const command = strOf(o, 'command', 'command');
  const args = strListOf(o, 'args', 'args') ?? [];
  const entrypoint = strListOf(o, 'entrypoint', 'entrypoint');
  const cmd = command ? [command, ...args] : args.length > 0 ? args : undefined;

  const privileged = boolOf(o, 'privileged', 'privileged') ?? false;
  if (privileged && !plugin.allowPrivileged) throw badConfig('privileged', 'is not allowed on this client (allow_privileged = false)');
  const runtime = strOf(o, 'runtime', 'runtime');
  if (runtime && !plugin.allowRuntimes.includes(runtime)) {
    throw badConfig('runtime', `${JSON.stringify(runtime)} is not allowed on this client (allow_runtimes = ${JSON.stringify(plugin.allowRuntimes)})`);
  }
  const capAdd = checkCaps(strListOf(o, 'cap_add', 'cap_add'), 'cap_add', plugin);
  const capDrop = checkCaps(strListOf(o, 'cap_drop', 'cap_drop'), 'cap_drop', plugin);

  // In a group network the task joins the pause container's namespace (sandbox-join.ts).
  const sandboxId = cfg.networkIsolation?.sandboxId;
  if (cfg.networkIsolation) checkGroupNetworkOptions(o);
  const networkMode = sandboxId ? sandboxNetworkMode(sandboxId) : strOf(o, 'network_mode', 'network_mode');
  if (networkMode !== undefined && !NETWORK_MODES.test(networkMode)) throw badConfig('network_mode', `${JSON.stringify(networkMode)} is not a network mode`);
  if (boolOf(o, 'tty', 'tty')) throw badConfig('tty', 'is not supported: task output is collected from the non-tty log stream');
  const logging = blockOf(o, 'logging', 'logging');
  const logType = logging ? strOf(logging, 'type', 'logging.type') ?? strOf(logging, 'driver', 'logging.driver') : undefined;
  if (logType && logType !== 'json-file') throw badConfig('logging.type', `${JSON.stringify(logType)} is not supported: task logs are read through the json-file log driver`);

  const modes = {
    ipc: checkNamespaceMode('ipc', strOf(o, 'ipc_mode', 'ipc_mode'), plugin.allowedModes, plugin.allowPrivileged),
    pid: checkNamespaceMode('pid', strOf(o, 'pid_mode', 'pid_mode'), plugin.allowedModes, plugin.allowPrivileged),
    uts: checkNamespaceMode('uts', strOf(o, 'uts_mode', 'uts_mode'), plugin.allowedModes, plugin.allowPrivileged),
    userns: checkNamespaceMode('userns', strOf(o, 'userns_mode', 'userns_mode'), plugin.allowedModes, plugin.allowPrivileged),
  };
  const securityOpt = checkSecurityOpts(strListOf(o, 'security_opt', 'security_opt') ?? [], plugin.allowPrivileged);
  const sysctls = checkSysctls(strMapOf(o, 'sysctl', 'sysctl') ?? {}, { networkMode, ipcMode: modes.ipc, utsMode: modes.uts, allowPrivileged: plugin.allowPrivileged });

  // Ports of a group network are mapped to the namespace by the client (CNI portmap), not by docker.
  const { exposed, bindings } = sandboxId ? { exposed: {}, bindings: {} } : parsePorts(o, cfg.env ?? {});
  const volumes = parseVolumes(o, cfg, plugin);
  const mounts = [...parseMounts(o, cfg, plugin), ...hostVolumeMounts(cfg), ...(cfg.networkIsolation ? groupNameMounts(cfg.networkIsolation) : [])];
  const binds = [`${cfg.dirs.sharedAllocDir}:/alloc`, `${cfg.dirs.localDir}:/local`, `${cfg.dirs.secretsDir}:/secrets`, ...volumes];

  const memHard = intOf(o, 'memory_hard_limit', 'memory_hard_limit') ?? 0;
  const memMax = cfg.resources.memoryMaxMB > 0 ? cfg.resources.memoryMaxMB : memHard;
  const memMB = cfg.resources.memoryMB;
  // memory_max = -1: a reservation without a hard limit (Docker's Memory 0 is unlimited).
  const unlimitedMemory = cfg.resources.memoryMaxMB === MEMORY_MAX_UNLIMITED;
  const memory = unlimitedMemory ? 0 : (memMax > memMB ? memMax : memMB) * 1024 * 1024;
  const hardCpu = boolOf(o, 'cpu_hard_limit', 'cpu_hard_limit') ?? false;
  const period = intOf(o, 'cpu_cfs_period', 'cpu_cfs_period') ?? 100_000;
  if (period < 1000 || period > 1_000_000) throw badConfig('cpu_cfs_period', 'must be between 1000 and 1000000 microseconds');
  const pidsLimit = intOf(o, 'pids_limit', 'pids_limit');
  if (pidsLimit !== undefined && pidsLimit < 0) throw badConfig('pids_limit', 'must not be negative');
  const shmSize = intOf(o, 'shm_size', 'shm_size');
  if (shmSize !== undefined && shmSize < 0) throw badConfig('shm_size', 'must not be negative');

  const labels: Record<string, string> = {
    ...(strMapOf(o, 'labels', 'labels') ?? {}),
    [LABEL_ALLOC_ID]: cfg.allocId,
    [LABEL_TASK_NAME]: cfg.taskName,
    [LABEL_JOB_NAME]: cfg.jobName,
    [LABEL_GROUP_NAME]: cfg.groupName,
    ...extraLabels,
  };

  const hostConfig: Obj = {
    Binds: binds,
    Mounts: mounts,
    Memory: memory,
    MemorySwap: memory,
    ...(memMax > memMB || unlimitedMemory ? { MemoryReservation: memMB * 1024 * 1024 } : {}),
    CpuShares: Math.max(2, cfg.resources.cpuShares),
    ...(hardCpu ? { CpuPeriod: period, CpuQuota: cpuQuota(cfg.resources.cpuShares, period) } : {}),
    ...(networkMode ? { NetworkMode: networkMode } : {}),
    PortBindings: bindings,
    Privileged: privileged,
    ...(capAdd ? { CapAdd: capAdd } : {}),
    ...(capDrop ? { CapDrop: capDrop } : {}),
    ...(runtime ? { Runtime: runtime } : {}),
    ...(boolOf(o, 'init', 'init') ? { Init: true } : {}),
    ...(pidsLimit !== undefined ? { PidsLimit: pidsLimit } : {}),
    ReadonlyRootfs: boolOf(o, 'readonly_rootfs', 'readonly_rootfs') ?? false,
    ...(shmSize !== undefined ? { ShmSize: shmSize } : {}),
    Ulimits: parseUlimits(o),
    ExtraHosts: strListOf(o, 'extra_hosts', 'extra_hosts') ?? [],
    Dns: strListOf(o, 'dns_servers', 'dns_servers') ?? [],
    DnsSearch: strListOf(o, 'dns_search_domains', 'dns_search_domains') ?? [],
    DnsOptions: strListOf(o, 'dns_options', 'dns_options') ?? [],
    SecurityOpt: securityOpt,
    GroupAdd: strListOf(o, 'group_add', 'group_add') ?? [],
    Sysctls: sysctls,
    ...(strMapOf(o, 'storage_opt', 'storage_opt') ? { StorageOpt: strMapOf(o, 'storage_opt', 'storage_opt') } : {}),
    ...(intOf(o, 'oom_score_adj', 'oom_score_adj') !== undefined ? { OomScoreAdj: intOf(o, 'oom_score_adj', 'oom_score_adj') } : {}),
    ...(modes.ipc ? { IpcMode: modes.ipc } : {}),
    ...(modes.pid ? { PidMode: modes.pid } : {}),
    ...(modes.uts ? { UTSMode: modes.uts } : {}),
    ...(modes.userns ? { UsernsMode: modes.userns } : {}),
    ...(strOf(o, 'cpuset_cpus', 'cpuset_cpus') ? { CpusetCpus: strOf(o, 'cpuset_cpus', 'cpuset_cpus') } : {}),
    LogConfig: { Type: 'json-file', Config: {} },
  };

  const create: Obj = {
    Image: image,
    ...(cmd ? { Cmd: cmd } : {}),
    ...(entrypoint ? { Entrypoint: entrypoint } : {}),
    Env: containerEnv(cfg.env ?? {}),
    Labels: labels,
    ...(strOf(o, 'hostname', 'hostname') ? { Hostname: strOf(o, 'hostname', 'hostname') } : {}),
    ...(strOf(o, 'work_dir', 'work_dir') ? { WorkingDir: strOf(o, 'work_dir', 'work_dir') } : {}),
    ...(cfg.user ? { User: cfg.user } : {}),
    ...(strOf(o, 'mac_address', 'mac_address') ? { MacAddress: strOf(o, 'mac_address', 'mac_address') } : {}),
    ExposedPorts: exposed,
    OpenStdin: boolOf(o, 'interactive', 'interactive') ?? false,
    Tty: false,
    HostConfig: hostConfig,
  };

  return {
    image,
    forcePull: boolOf(o, 'force_pull', 'force_pull') ?? false,
    auth: parseAuth(o),
    pullTimeoutMs: durationMsOf(o, 'image_pull_timeout', 'image_pull_timeout') ?? 5 * 60_000,
    create,
  };
}
