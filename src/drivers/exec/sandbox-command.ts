/**
 * The command lines that put a process into an exec task's sandbox.
 *
 * Start:  sh (joins the task's cgroups by writing its own pid, then execs)
 *           → bwrap (new pid/mount/uts/ipc[/net] namespaces, the task directory as `/`, the
 *             chroot_env bound read-only over it, /alloc, its own /proc and a minimal /dev)
 *             → setpriv (the task's user, capability bounding set, no_new_privs) → the command
 * Exec:   sh (joins the same cgroups) → nsenter (the task's namespaces and root)
 *           → setpriv (same user and capabilities, dies with nsenter) → the command
 *
 * Joining the cgroup in the shell before exec is race-free: every process of the sandbox is
 * born inside the limits. bwrap rather than a hand-made unshare/pivot_root sequence: one fork,
 * no mount(8) per bind (see the README's design section).
 */
import { ExecTaskConfig, NamespaceMode } from './exec-config.js';

/** Host programs the sandbox needs; found at fingerprint time. */
export interface SandboxTools {
  sh: string;
  bwrap: string;
  setpriv: string;
  nsenter: string;
}

/** A task's user as numbers (resolved on the host, as Nomad does). */
export interface TaskUser {
  name: string;
  uid: number;
  gid: number;
}

/** What the sandbox of one task is made of. */
export interface SandboxSpec {
  taskDir: string;
  sharedAllocDir: string;
  /** Host path → path inside, bound read-only. */
  chrootEnv: Record<string, string>;
  networkNone: boolean;
  task: ExecTaskConfig;
  user: TaskUser;
  caps: string[];
  hostname: string;
  /** The cgroup.procs files to join first. */
  procsFiles: string[];
}

/** `sh -c` body: writes its pid into the first N files given, then execs the rest. */
const JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';

function joinCgroups(tools: SandboxTools, procsFiles: string[], rest: string[]): string[] {
  return [tools.sh, '-c', JOIN_CGROUPS, 'caravan-cgroup-join', String(procsFiles.length), ...procsFiles, ...rest];
}

/** setpriv arguments: the user, the capability bounding set, no_new_privs. */
function dropPrivileges(tools: SandboxTools, spec: Pick<SandboxSpec, 'user' | 'caps'>, extra: string[] = []): string[] {
  const bounding = ['-all', ...spec.caps.map((c) => `+${c}`)].join(',');
  return [
    tools.setpriv,
    `--reuid=${spec.user.uid}`,
    `--regid=${spec.user.gid}`,
    '--clear-groups',
    `--bounding-set=${bounding}`,
    '--inh-caps=-all',
    '--no-new-privs',
    ...extra,
    '--',
  ];
}

/** The argv (argv[0] is the file to run) that starts the task's command in a new sandbox. */
export function sandboxStartArgv(tools: SandboxTools, spec: SandboxSpec): string[] {
  const t = spec.task;
  const bw: string[] = [tools.bwrap, '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session'];
  if (t.pidMode === NamespaceMode.Private) bw.push('--unshare-pid');
  if (t.ipcMode === NamespaceMode.Private) bw.push('--unshare-ipc');
  if (spec.networkNone) bw.push('--unshare-net');
  bw.push('--bind', spec.taskDir, '/');
  for (const [src, dest] of Object.entries(spec.chrootEnv)) bw.push('--ro-bind-try', src, dest);
  bw.push('--bind', spec.sharedAllocDir, '/alloc', '--proc', '/proc', '--dev', '/dev');
  bw.push('--hostname', spec.hostname, '--chdir', t.workDir || '/', '--');
  return joinCgroups(tools, spec.procsFiles, [...bw, ...dropPrivileges(tools, spec), t.command, ...t.args]);
}

/**
 * The argv that runs `command` inside the running sandbox whose first process (bwrap's init,
 * or the command itself without a pid namespace) is `targetPid`.
 */
export function sandboxExecArgv(
  tools: SandboxTools,
  spec: Pick<SandboxSpec, 'user' | 'caps' | 'procsFiles' | 'networkNone'> & { task: Pick<ExecTaskConfig, 'pidMode' | 'ipcMode' | 'workDir'> },
  targetPid: number,
  command: string[],
): string[] {
  const ns = [tools.nsenter, `--target=${targetPid}`, '--mount', '--uts', '--cgroup'];
  if (spec.task.pidMode === NamespaceMode.Private) ns.push('--pid');
  if (spec.task.ipcMode === NamespaceMode.Private) ns.push('--ipc');
  if (spec.networkNone) ns.push('--net');
  // `--wdns`, not `--wd=<dir>`: the latter opens <dir> on the host before entering.
  ns.push('--root', `--wdns=${spec.task.workDir || '/'}`, '--');
  // Dies with nsenter: a session the client closed must not leave its command in the sandbox.
  return joinCgroups(tools, spec.procsFiles, [...ns, ...dropPrivileges(tools, spec, ['--pdeathsig=KILL']), ...command]);
}
