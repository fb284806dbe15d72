/**
 * The docker task options that would take a container out of its confinement, checked against
 * the plugin config before anything reaches the engine:
 * - namespace modes (`pid_mode`, `ipc_mode`, `uts_mode`, `userns_mode`): a mode outside the
 *   plugin's `allowed_modes` is refused — "host" shares the host's namespace (a root container
 *   with host PIDs can signal the agent), "container:<name>" joins another task's, maybe
 *   another namespace's, container. Nomad (HCSEC-2026-19) refuses host modes unless the client
 *   allows them; `allow_privileged = true` allows every mode, as Nomad documents.
 * - `security_opt`: only options that keep or tighten a confinement are accepted
 *   (no-new-privileges, a named AppArmor profile, SELinux user/role/level/type labels but not
 *   the unconfined types); seccomp=unconfined or any custom profile, apparmor=unconfined,
 *   label=disable, systempaths=unconfined, no-new-privileges=false, writable-cgroups and
 *   anything unknown need `allow_privileged`.
 * - `sysctl`: only the sysctls Docker namespaces per container; a host-wide one
 *   (kernel.core_pattern runs a program as host root on a crash) is refused.
 */
import { badConfig } from './config-values.js';

/** The namespaces whose mode a task may choose, with the modes each knows. */
export const NAMESPACE_MODES = {
  pid: ['private', 'host', 'container'],
  ipc: ['private', 'none', 'shareable', 'host', 'container'],
  uts: ['private', 'host'],
  userns: ['private', 'host'],
} as const satisfies Record<string, readonly string[]>;
export type Namespace = keyof typeof NAMESPACE_MODES;

/** The modes allowed per namespace (`plugin "docker" { config { allowed_modes { … } } }`). */
export type AllowedModes = Record<Namespace, string[]>;

/** Default `allowed_modes`: a namespace of the container's own (and, for IPC, none or shareable). */
export const DEFAULT_ALLOWED_MODES: Readonly<AllowedModes> = {
  pid: ['private'],
  ipc: ['private', 'none', 'shareable'],
  uts: ['private'],
  userns: ['private'],
};

/** Checks a plugin's `allowed_modes.<ns>` list: only modes that namespace knows. */
export function checkAllowedModes(ns: Namespace, modes: string[]): string[] {
  const known: readonly string[] = NAMESPACE_MODES[ns];
  for (const [i, m] of modes.entries()) {
    if (!known.includes(m)) throw badConfig(`allowed_modes.${ns}[${i}]`, `${JSON.stringify(m)} is not a ${ns} mode (one of ${known.join(', ')})`);
  }
  return modes;
}

/** The kind of a task's mode value: "container:<id>" is "container". */
function modeKind(value: string): string {
  return value.startsWith('container:') ? 'container' : value;
}

/**
 * Checks a task's `<ns>_mode` against the plugin; returns the value for the engine (undefined
 * for the container's own namespace, which is the engine's default).
 */
export function checkNamespaceMode(ns: Namespace, value: string | undefined, allowed: AllowedModes, allowPrivileged: boolean): string | undefined {
  if (value === undefined || value === '') return undefined;
  const field = `${ns}_mode`;
  const kind = modeKind(value);
  const known: readonly string[] = NAMESPACE_MODES[ns];
  if (!known.includes(kind) || value === 'container:') throw badConfig(field, `${JSON.stringify(value)} is not a ${ns} mode (one of ${known.map((k) => (k === 'container' ? 'container:<name>' : k)).join(', ')})`);
  if (!allowPrivileged && !allowed[ns].includes(kind)) {
    throw badConfig(field, `${JSON.stringify(value)} is not allowed on this client (allowed_modes.${ns} = ${JSON.stringify(allowed[ns])}; allow it in plugin "docker" { config { allowed_modes { ${ns} = [..., ${JSON.stringify(kind)}] } } } or with allow_privileged)`);
  }
  // The engine takes "" for a private PID, UTS or user namespace; "private" is an IPC mode of its own.
  return kind === 'private' && ns !== 'ipc' ? undefined : value;
}

/** SELinux types that leave the container unconfined. */
const UNCONFINED_SELINUX_TYPES = ['spc_t', 'unconfined_t', 'container_runtime_t'];

/** Why a security option loosens the confinement, or undefined when it keeps or tightens it. */
function looseningOf(opt: string): string | undefined {
  // Docker accepts "key=value" and the older "key:value".
  const m = /^([a-z-]+)(?:[=:](.*))?$/s.exec(opt.trim());
  if (!m) return 'is not a security option Caravan knows';
  const key = m[1]!;
  const value = m[2];
  switch (key) {
    case 'no-new-privileges':
      return value === undefined || value === 'true' ? undefined : 'turns no-new-privileges off';
    case 'apparmor':
      if (value === undefined || value === '') return 'names no AppArmor profile';
      return value === 'unconfined' ? 'disables AppArmor' : undefined;
    case 'seccomp':
      // A custom profile can allow every syscall: only the engine's default is kept.
      return value === 'unconfined' ? 'disables seccomp' : 'replaces the default seccomp profile';
    case 'label': {
      if (value === undefined || value === 'disable') return 'disables SELinux labeling';
      const lm = /^(user|role|type|level|filetype):(.+)$/s.exec(value);
      if (!lm) return 'is not a SELinux label option Caravan knows';
      if ((lm[1] === 'type' || lm[1] === 'filetype') && UNCONFINED_SELINUX_TYPES.includes(lm[2]!)) return `runs the container as the unconfined SELinux type ${lm[2]}`;
      return undefined;
    }
    case 'systempaths':
      return value === 'unconfined' ? 'unmasks /proc and /sys paths' : 'is not a systempaths value Caravan knows';
    case 'writable-cgroups':
      return value === 'false' ? undefined : 'makes the cgroup filesystem writable';
    default:
      return 'is not a security option Caravan knows';
  }
}

/** Checks `security_opt` entries: any that loosens a confinement needs allow_privileged. */
export function checkSecurityOpts(opts: string[], allowPrivileged: boolean): string[] {
  if (allowPrivileged) return opts;
  for (const [i, opt] of opts.entries()) {
    const why = looseningOf(opt);
    if (why) throw badConfig(`security_opt[${i}]`, `${JSON.stringify(opt)} ${why}, which this client does not allow (allow_privileged = false)`);
  }
  return opts;
}

/** IPC-namespaced sysctls (Docker's list); net.* and fs.mqueue.* are namespaced by prefix. */
const IPC_SYSCTLS = ['kernel.msgmax', 'kernel.msgmnb', 'kernel.msgmni', 'kernel.sem', 'kernel.shmall', 'kernel.shmmax', 'kernel.shmmni', 'kernel.shm_rmid_forced'];
const UTS_SYSCTLS = ['kernel.domainname', 'kernel.hostname'];

/**
 * Checks `sysctl`: only sysctls of a namespace the container has of its own (Docker's rule);
 * a host-wide sysctl, or a namespaced one while that namespace is the host's, needs allow_privileged.
 */
export function checkSysctls(sysctls: Record<string, string>, ctx: { networkMode: string | undefined; ipcMode: string | undefined; utsMode: string | undefined; allowPrivileged: boolean }): Record<string, string> {
  if (ctx.allowPrivileged) return sysctls;
  for (const name of Object.keys(sysctls)) {
    const n = name.replace(/\//g, '.');
    const field = `sysctl.${name}`;
    let ns: 'net' | 'ipc' | 'uts' | undefined;
    if (n.startsWith('net.')) ns = 'net';
    else if (IPC_SYSCTLS.includes(n) || n.startsWith('fs.mqueue.')) ns = 'ipc';
    else if (UTS_SYSCTLS.includes(n)) ns = 'uts';
    if (!ns) throw badConfig(field, 'is a host-wide sysctl, which this client does not allow (allow_privileged = false)');
    const mode = ns === 'net' ? ctx.networkMode : ns === 'ipc' ? ctx.ipcMode : ctx.utsMode;
    if (mode === 'host' || mode?.startsWith('container:')) throw badConfig(field, `would change the ${mode === 'host' ? 'host\'s' : 'other container\'s'} ${ns} namespace (${ns === 'net' ? 'network' : ns}_mode = ${JSON.stringify(mode)})`);
  }
  return sysctls;
}
