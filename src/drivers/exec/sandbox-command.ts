/**
 * The command lines that put a process into an exec task's sandbox.
 *
 * Start:  sh (joins the task's cgroups by writing its own pid, opens the seccomp filter on fd 9,
 *           then execs)
 *           → bwrap (new pid/mount/uts/ipc[/net] namespaces, the task directory as `/`, the
 *             chroot_env bound read-only over it, /alloc, the host volumes, its own /proc with the kernel's
 *             global knobs read-only or masked, a minimal /dev; the seccomp filter loaded last)
 *             → setpriv (the task's user, capability bounding set, no_new_privs) → the command
 * Exec:   sh (joins the same cgroups, opens the exec filter on fd 9)
 *           → bwrap (no namespace of its own but a throwaway mount namespace: only there to load
 *             the filter, as nothing else on the host can put one on a process it then execs)
 *           → nsenter (the task's namespaces and root)
 *           → setpriv (same user and capabilities, dies with nsenter) → the command
 * Exec on a terminal: the same, with `script` between setpriv and the command (see
 *           onOwnTerminal below).
 *
 * Joining the cgroup in the shell before exec is race-free: every process of the sandbox is
 * born inside the limits. bwrap rather than a hand-made unshare/pivot_root sequence: one fork,
 * no mount(8) per bind (see the README's design section). The filter reaches bwrap as an open
 * file descriptor because that is how `--seccomp` takes it; the shell's redirection opens it.
 */
import { RELAY_READY_FD, type TaskMount } from '../driver.js';
import { shellQuote } from '../../http/exec/shell-words.js';
import { ExecTaskConfig, NamespaceMode } from './exec-config.js';

/** Host programs the sandbox needs; found at fingerprint time. */
export interface SandboxTools {
  sh: string;
  bwrap: string;
  setpriv: string;
  nsenter: string;
  /** util-linux's script(1), which gives exec sessions a terminal of the sandbox's own; optional. */
  script?: string;
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
  /** The allocation's network namespace to join (group network), entered with nsenter before bwrap. */
  netnsPath?: string;
  /** nsenter's path, with netnsPath. */
  nsenter?: string;
  /** Mounted read-only at /etc/resolv.conf (the group network's `dns` block). */
  resolvConf?: string;
  /** Mounted read-only at /etc/hosts (the group network's `hostname`). */
  hostsFile?: string;
  task: ExecTaskConfig;
  user: TaskUser;
  caps: string[];
  hostname: string;
  /** The cgroup.procs files to join first. */
  procsFiles: string[];
  /** bwrap arguments confining /proc and /sys, after the sandbox's own are mounted (proc-confinement.ts). */
  procConfinement: string[];
  /** The compiled seccomp filter bwrap loads for the task; none when the client turned it off. */
  seccompFile?: string;
  /** Host volumes, bound after /alloc (their mount points made by prepareMountPoints). */
  mounts?: readonly TaskMount[];
}

/** The descriptor the shell opens the seccomp filter on for bwrap (dash takes single digits). */
const SECCOMP_FD = 9;

/**
 * `sh -c` body: writes its pid into the first N files given, then execs the rest — with the file
 * $2 open on fd 9 when $2 is not empty (an unreadable filter fails the start: never unfiltered).
 */
const JOIN_CGROUPS =
  'n=$1; f=$2; shift 2; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; ' +
  `[ -z "$f" ] && exec "$@"; exec "$@" ${SECCOMP_FD}<"$f"`;

function joinCgroups(tools: SandboxTools, procsFiles: string[], seccompFile: string | undefined, rest: string[]): string[] {
  return [tools.sh, '-c', JOIN_CGROUPS, 'caravan-cgroup-join', String(procsFiles.length), seccompFile ?? '', ...procsFiles, ...rest];
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
  if (spec.resolvConf) bw.push('--ro-bind', spec.resolvConf, '/etc/resolv.conf');
  if (spec.hostsFile) bw.push('--ro-bind', spec.hostsFile, '/etc/hosts');
  bw.push('--bind', spec.sharedAllocDir, '/alloc');
  for (const m of spec.mounts ?? []) bw.push(m.readOnly ? '--ro-bind' : '--bind', m.hostPath, m.taskPath);
  bw.push('--proc', '/proc', '--dev', '/dev', ...spec.procConfinement);
  if (spec.seccompFile) bw.push('--seccomp', String(SECCOMP_FD));
  bw.push('--hostname', spec.hostname, '--chdir', t.workDir || '/', '--');
  // bwrap without --unshare-net stays in the namespace nsenter put it in.
  const join = spec.netnsPath ? [spec.nsenter ?? tools.nsenter, `--net=${spec.netnsPath}`, '--'] : [];
  return joinCgroups(tools, spec.procsFiles, spec.seccompFile, [...join, ...bw, ...dropPrivileges(tools, spec), t.command, ...t.args]);
}

/** The shell script(1) runs a command line with (it takes $SHELL, which the task may set to anything). */
const RELAY_SHELL = '/bin/sh';

/**
 * script(1) arguments that run `command` on a new terminal of the sandbox's own devpts instance
 * (bwrap's `--dev` mounts one), as its session leader and controlling terminal, and relay that
 * terminal over the session's. The session's terminal is a host pty, absent from the sandbox's
 * /dev/pts: on it `tty` says "not a tty", and a shell in the sandbox's pid namespace cannot
 * hand the terminal's foreground back to a process group it cannot see (dash exits 2). The
 * sandbox's own terminal is what runc gives Nomad's exec sessions: /dev/pts/N inside, owned by
 * the task's user, and no host pty reachable. Nothing but a process inside can allocate one
 * there without ioctls Node lacks, hence the relay.
 *
 * script runs as the task's user (its terminal is the user's, as runc's fixStdioPermissions
 * makes it), with `--return` for the command's exit code (128+n for a signal). The command
 * says on RELAY_READY_FD that the terminals are ready (and closes it), dies with script (which
 * dies with nsenter), and gets back the task's $SHELL, which script had to see as RELAY_SHELL.
 */
function onOwnTerminal(setpriv: string, terminal: SandboxTerminal, command: string[]): string[] {
  const shell = terminal.taskShell === undefined ? 'unset SHELL' : `export SHELL=${shellQuote(terminal.taskShell)}`;
  // script forks this line once both terminals are set: the session's input may come now.
  const ready = `printf . >&${RELAY_READY_FD}; exec ${RELAY_READY_FD}>&-`;
  const line = `${ready}; ${shell}; exec ${[setpriv, '--pdeathsig=KILL', '--', ...command].map(shellQuote).join(' ')}`;
  return [terminal.script, '--quiet', '--return', '--command', line, '/dev/null'];
}

/** A terminal for an exec session (onOwnTerminal). */
export interface SandboxTerminal {
  /** script(1)'s path (SandboxTools.script), the same inside the sandbox as on the host. */
  script: string;
  /** The task's $SHELL, if it has one. */
  taskShell: string | undefined;
}

/** What an exec into a sandbox runs: on the session's pipes, or on a terminal of its own. */
export interface SandboxExecCommand {
  argv: string[];
  /** The environment script(1) needs on top of the command's (a terminal session only). */
  env?: Record<string, string>;
}

/**
 * The argv that runs `command` inside the running sandbox whose first process (bwrap's init,
 * or the command itself without a pid namespace) is `targetPid`. With a `seccompFile` (the exec
 * variant of the filter, which lets nsenter's setns through), bwrap loads it first. With a
 * `terminal`, the command runs on a terminal of the sandbox's own (onOwnTerminal).
 */
export function sandboxExecArgv(
  tools: SandboxTools,
  spec: Pick<SandboxSpec, 'user' | 'caps' | 'procsFiles' | 'networkNone' | 'seccompFile'> & { task: Pick<ExecTaskConfig, 'pidMode' | 'ipcMode' | 'workDir'> },
  targetPid: number,
  command: string[],
  terminal?: SandboxTerminal,
): SandboxExecCommand {
  const ns = [tools.nsenter, `--target=${targetPid}`, '--mount', '--uts', '--cgroup'];
  if (spec.task.pidMode === NamespaceMode.Private) ns.push('--pid');
  if (spec.task.ipcMode === NamespaceMode.Private) ns.push('--ipc');
  if (spec.networkNone) ns.push('--net');
  // `--wdns`, not `--wd=<dir>`: the latter opens <dir> on the host before entering.
  ns.push('--root', `--wdns=${spec.task.workDir || '/'}`, '--');
  const run = terminal ? onOwnTerminal(tools.setpriv, terminal, command) : command;
  const env = terminal ? { env: { SHELL: RELAY_SHELL } } : {};
  // Dies with nsenter: a session the client closed must not leave its command in the sandbox.
  const inside = [...ns, ...dropPrivileges(tools, spec, ['--pdeathsig=KILL']), ...run];
  if (!spec.seccompFile) return { argv: joinCgroups(tools, spec.procsFiles, undefined, inside), ...env };
  // nsenter dies with bwrap's monitor, which is the process the client holds and kills.
  const loader = [tools.bwrap, '--dev-bind', '/', '/', '--die-with-parent', '--seccomp', String(SECCOMP_FD), '--'];
  return { argv: joinCgroups(tools, spec.procsFiles, spec.seccompFile, [...loader, ...inside]), ...env };
}
