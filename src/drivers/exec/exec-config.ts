/**
 * The exec driver's configuration: the task's `config { … }` (Nomad's exec task config), the
 * client's `plugin "exec" { config { … } }` and `client { chroot_env { … } }`, validated with
 * errors naming the field, and the capability set they give a task.
 */
import { DriverError, DriverErrorCode } from '../driver.js';
import { refuseUnknownConfigKeys } from '../unknown-config-keys.js';

/** Nomad's default `chroot_env`: host paths bound read-only into every exec task's root, by destination. */
export const DEFAULT_CHROOT_ENV: Readonly<Record<string, string>> = {
  '/bin': '/bin',
  '/etc': '/etc',
  '/lib': '/lib',
  '/lib32': '/lib32',
  '/lib64': '/lib64',
  '/run/resolvconf': '/run/resolvconf',
  '/sbin': '/sbin',
  '/usr': '/usr',
};

/**
 * Nomad's default exec capability allowlist (the `allow_caps` default, Docker's default set):
 * what a task may have; a task gets exactly these unless cap_add/cap_drop say otherwise.
 */
export const DEFAULT_ALLOW_CAPS: readonly string[] = [
  'audit_write', 'chown', 'dac_override', 'fowner', 'fsetid', 'kill', 'mknod',
  'net_bind_service', 'setfcap', 'setgid', 'setpcap', 'setuid', 'sys_chroot',
];

/** Every capability name Linux knows (for validating cap_add/allow_caps). */
const ALL_CAPS = new Set([
  'audit_control', 'audit_read', 'audit_write', 'block_suspend', 'bpf', 'checkpoint_restore', 'chown',
  'dac_override', 'dac_read_search', 'fowner', 'fsetid', 'ipc_lock', 'ipc_owner', 'kill', 'lease',
  'linux_immutable', 'mac_admin', 'mac_override', 'mknod', 'net_admin', 'net_bind_service',
  'net_broadcast', 'net_raw', 'perfmon', 'setfcap', 'setgid', 'setpcap', 'setuid', 'sys_admin',
  'sys_boot', 'sys_chroot', 'sys_module', 'sys_nice', 'sys_pacct', 'sys_ptrace', 'sys_rawio',
  'sys_resource', 'sys_time', 'sys_tty_config', 'syslog', 'wake_alarm',
]);

/**
 * The default per-task process limit: generous for any real workload, but a fork bomb stops
 * there instead of at the memory limit or the host's pid_max. Nomad's exec has no such limit.
 */
export const DEFAULT_PIDS_LIMIT = 4096;

export const NamespaceMode = { Private: 'private', Host: 'host' } as const;
export type NamespaceMode = (typeof NamespaceMode)[keyof typeof NamespaceMode];

/** The client's exec plugin config. */
export interface ExecPluginConfig {
  defaultPidMode: NamespaceMode;
  defaultIpcMode: NamespaceMode;
  allowCaps: string[];
  /** Per-task process limit (0: none). */
  pidsLimit: number;
  /** Whether tasks (and exec sessions into them) run under the default seccomp filter. */
  seccomp: boolean;
  /** Host path → path inside the task, bound read-only. */
  chrootEnv: Record<string, string>;
}

/** A validated exec task config. */
export interface ExecTaskConfig {
  command: string;
  args: string[];
  pidMode: NamespaceMode;
  ipcMode: NamespaceMode;
  capAdd: string[];
  capDrop: string[];
  workDir: string;
}

function bad(field: string, message: string): DriverError {
  return new DriverError(DriverErrorCode.BadConfig, `exec: ${field} ${message}`, false);
}

function stringList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(field, 'must be a list of strings');
  return v.map((x, i) => {
    if (typeof x === 'string') return x;
    if (typeof x === 'number' || typeof x === 'boolean') return String(x);
    throw bad(`${field}[${i}]`, 'must be a string');
  });
}

function mode(v: unknown, field: string, dflt: NamespaceMode): NamespaceMode {
  if (v === undefined || v === null || v === '') return dflt;
  if (v === NamespaceMode.Private || v === NamespaceMode.Host) return v;
  throw bad(field, `must be "private" or "host", got ${JSON.stringify(v)}`);
}

/** Lower-case capability names without the `cap_` prefix; "all" kept; unknown names refused. */
function capNames(list: string[], field: string): string[] {
  return list.map((c) => {
    const n = c.toLowerCase().replace(/^cap_/, '');
    if (n !== 'all' && !ALL_CAPS.has(n)) throw bad(field, `names an unknown capability ${JSON.stringify(c)}`);
    return n;
  });
}

/** Validates the `plugin "exec" { config { … } }` body and `client { chroot_env }`. */
export function parseExecPluginConfig(raw: Record<string, unknown> | undefined, chrootEnv?: Record<string, string>): ExecPluginConfig {
  const cfg = raw ?? {};
  const allowCaps = cfg['allow_caps'] === undefined ? [...DEFAULT_ALLOW_CAPS] : capNames(stringList(cfg['allow_caps'], 'plugin config "allow_caps"'), 'plugin config "allow_caps"');
  const pids = cfg['pids_limit'] ?? DEFAULT_PIDS_LIMIT;
  if (typeof pids !== 'number' || !Number.isInteger(pids) || pids < 0) throw bad('plugin config "pids_limit"', 'must be an integer ≥ 0 (0: no limit)');
  const seccomp = cfg['seccomp'] ?? true;
  if (typeof seccomp !== 'boolean') throw bad('plugin config "seccomp"', 'must be true or false');
  const env = chrootEnv ?? DEFAULT_CHROOT_ENV;
  for (const [src, dest] of Object.entries(env)) {
    if (!src.startsWith('/') || !dest.startsWith('/')) throw bad('client chroot_env', `entries must map absolute paths, got ${JSON.stringify(src)} = ${JSON.stringify(dest)}`);
  }
  return {
    defaultPidMode: mode(cfg['default_pid_mode'], 'plugin config "default_pid_mode"', NamespaceMode.Private),
    defaultIpcMode: mode(cfg['default_ipc_mode'], 'plugin config "default_ipc_mode"', NamespaceMode.Private),
    allowCaps: allowCaps.includes('all') ? [...ALL_CAPS] : allowCaps,
    pidsLimit: pids,
    seccomp,
    chrootEnv: { ...env },
  };
}

/** The task config fields exec reads. */
const EXEC_TASK_KEYS = ['command', 'args', 'pid_mode', 'ipc_mode', 'cap_add', 'cap_drop', 'work_dir'] as const;

/** Validates an exec task's `config { … }`; an unknown field is named with the closest known one. */
export function parseExecTaskConfig(cfg: Record<string, unknown>, plugin: ExecPluginConfig): ExecTaskConfig {
  refuseUnknownConfigKeys('exec', cfg, EXEC_TASK_KEYS);
  const command = cfg['command'];
  if (typeof command !== 'string' || command.trim() === '') throw bad('config field "command"', 'is required and must be a non-empty string');
  const workDir = cfg['work_dir'] ?? '';
  if (typeof workDir !== 'string' || (workDir !== '' && !workDir.startsWith('/'))) throw bad('config field "work_dir"', 'must be an absolute path inside the task');
  return {
    command,
    args: stringList(cfg['args'], 'config field "args"'),
    pidMode: mode(cfg['pid_mode'], 'config field "pid_mode"', plugin.defaultPidMode),
    ipcMode: mode(cfg['ipc_mode'], 'config field "ipc_mode"', plugin.defaultIpcMode),
    capAdd: capNames(stringList(cfg['cap_add'], 'config field "cap_add"'), 'config field "cap_add"'),
    capDrop: capNames(stringList(cfg['cap_drop'], 'config field "cap_drop"'), 'config field "cap_drop"'),
    workDir,
  };
}

/**
 * The task's capabilities, as Nomad computes them: the default set, plus cap_add (each of which
 * must be allowed by the client's allow_caps), minus cap_drop ("all" drops everything).
 */
export function taskCapabilities(task: ExecTaskConfig, plugin: ExecPluginConfig): string[] {
  const allowed = new Set(plugin.allowCaps);
  const add = task.capAdd.includes('all') ? [...ALL_CAPS] : task.capAdd;
  const refused = add.filter((c) => !allowed.has(c));
  if (refused.length > 0) {
    throw bad('config field "cap_add"', `asks for capabilities the client does not allow (plugin "exec" allow_caps): ${refused.join(', ')}`);
  }
  const caps = new Set([...DEFAULT_ALLOW_CAPS.filter((c) => allowed.has(c)), ...add]);
  if (task.capDrop.includes('all')) caps.clear();
  for (const c of task.capDrop) caps.delete(c);
  return [...caps].sort();
}
