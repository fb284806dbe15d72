/**
 * The exec sandbox's default seccomp filter: a deny list of the syscalls Docker's default profile
 * refuses to an unprivileged container (mounts, modules, kexec, bpf, perf, keyrings, ptrace,
 * swap, accounting, clock setting, namespaces…), returning EPERM, on every architecture the
 * kernel may be running a task's code as (x86_64, i386 on x86_64, aarch64); any other
 * architecture or ABI (x32, arm32 compat) is killed, because its numbers would dodge the tables.
 *
 * Why a deny list and not Docker's allow list: the exec driver runs host binaries of any age on
 * a host-shaped root; an allow list would break whatever calls a syscall newer than the list,
 * while every syscall denied here needs a capability a task does not have or is a known kernel
 * attack surface. Why at all, when capabilities already stop most of these: a task given
 * `user = "root"` or cap_add keeps more of the kernel in reach, and user namespaces (which
 * capabilities do not stop) hand any user the capabilities these syscalls check. Nomad's exec
 * has no seccomp filter; Caravan goes further here.
 *
 * Layout (one section per architecture, each with its own verdicts so every jump stays within
 * classic BPF's 255-instruction reach):
 *
 *   ld arch ─┬─ x86_64 ─┐   ld nr; nr ≥ x32 bit → kill; clone → check flags; unshare → check
 *            ├─ i386 ───┤   flags; clone3 → ENOSYS (its flags are behind a pointer: libc falls
 *            ├─ aarch64 ┘   back to clone); each refused nr → EPERM; else allow
 *            └─ other → kill
 */
import { BpfProgramBuilder, serializeBpf, type BpfInstruction } from './bpf-program.js';
import { SYSCALL_TABLES, type SyscallName, type SyscallTable } from './syscall-tables.js';

/** Seccomp verdicts (linux/seccomp.h). */
export const SeccompRet = {
  KillProcess: 0x80000000,
  Errno: 0x00050000,
  Allow: 0x7fff0000,
} as const;

const EPERM = 1;
const ENOSYS = 38;

/** Offsets into `struct seccomp_data` (little-endian: the low word of an argument comes first). */
export const SeccompData = {
  nr: 0,
  arch: 4,
  /** The low 32 bits of argument i. */
  argLow: (i: number) => 16 + 8 * i,
} as const;

/** clone(2)/unshare(2) flags that create a namespace. */
export const CloneFlag = {
  NEWTIME: 0x00000080,
  NEWNS: 0x00020000,
  NEWCGROUP: 0x02000000,
  NEWUTS: 0x04000000,
  NEWIPC: 0x08000000,
  NEWUSER: 0x10000000,
  NEWPID: 0x20000000,
  NEWNET: 0x40000000,
} as const;

/**
 * Namespace flags refused to clone. CLONE_NEWTIME is left out: in clone's flags that bit is part
 * of the exit signal (only clone3 and unshare take NEWTIME).
 */
export const CLONE_NAMESPACE_FLAGS =
  (CloneFlag.NEWNS | CloneFlag.NEWCGROUP | CloneFlag.NEWUTS | CloneFlag.NEWIPC | CloneFlag.NEWUSER | CloneFlag.NEWPID | CloneFlag.NEWNET) >>> 0;
/** Namespace flags refused to unshare. */
export const UNSHARE_NAMESPACE_FLAGS = (CLONE_NAMESPACE_FLAGS | CloneFlag.NEWTIME) >>> 0;

/** The refused syscalls, grouped by what they would give a task. */
export const REFUSED_SYSCALLS: ReadonlyArray<{ what: string; names: readonly SyscallName[] }> = [
  { what: 'mounting and moving file systems', names: ['mount', 'umount', 'umount2', 'pivot_root', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'move_mount', 'open_tree', 'mount_setattr'] },
  { what: 'joining other namespaces', names: ['setns'] },
  { what: 'loading kernel code or another kernel', names: ['init_module', 'finit_module', 'delete_module', 'create_module', 'query_module', 'get_kernel_syms', 'kexec_load', 'kexec_file_load', 'bpf'] },
  { what: 'rebooting, swap, accounting, quotas', names: ['reboot', 'swapon', 'swapoff', 'acct', 'quotactl', 'quotactl_fd'] },
  { what: 'kernel keyrings (not namespaced)', names: ['keyctl', 'add_key', 'request_key'] },
  { what: 'reading or writing other processes', names: ['ptrace', 'process_vm_readv', 'process_vm_writev', 'kcmp'] },
  { what: 'kernel attack surface without a container use', names: ['perf_event_open', 'userfaultfd', 'io_uring_setup', 'io_uring_enter', 'io_uring_register', 'lookup_dcookie', 'uselib', 'ustat', 'sysfs', '_sysctl', 'nfsservctl'] },
  { what: 'opening files by handle (escapes a chroot)', names: ['open_by_handle_at', 'name_to_handle_at'] },
  { what: 'port I/O and vm86', names: ['iopl', 'ioperm', 'vm86', 'vm86old'] },
  { what: 'the kernel log and the system clock', names: ['syslog', 'settimeofday', 'stime', 'clock_settime', 'clock_settime64', 'clock_adjtime', 'clock_adjtime64'] },
];

/** Options of the filter. */
export interface SeccompFilterOptions {
  /**
   * Let setns(2) through. Only for the filter wrapping an `alloc exec` session, whose nsenter
   * must join the task's namespaces after the filter is in place (seccomp cannot be added from
   * outside a process); the command it then runs holds no capability to call setns with.
   */
  allowSetns?: boolean;
}

function section(p: BpfProgramBuilder, t: SyscallTable, opts: SeccompFilterOptions): void {
  const l = (name: string) => `${t.name}:${name}`;
  p.label(l('start')).load(SeccompData.nr);
  if (t.foreignAbiFrom !== undefined) p.jumpGe(t.foreignAbiFrom, l('kill'));
  const n = t.numbers;
  if (n.clone !== undefined) p.jumpEq(n.clone, l('clone'));
  if (n.unshare !== undefined) p.jumpEq(n.unshare, l('unshare'));
  if (n.clone3 !== undefined) p.jumpEq(n.clone3, l('enosys'));
  const refused = new Set<number>();
  for (const group of REFUSED_SYSCALLS) {
    for (const name of group.names) {
      if (name === 'setns' && opts.allowSetns) continue;
      const nr = n[name];
      if (nr !== undefined) refused.add(nr);
    }
  }
  for (const nr of [...refused].sort((a, b) => a - b)) p.jumpEq(nr, l('eperm'));
  p.ret(SeccompRet.Allow);
  p.label(l('clone')).load(SeccompData.argLow(0)).jumpSet(CLONE_NAMESPACE_FLAGS, l('eperm')).ret(SeccompRet.Allow);
  p.label(l('unshare')).load(SeccompData.argLow(0)).jumpSet(UNSHARE_NAMESPACE_FLAGS, l('eperm')).ret(SeccompRet.Allow);
  p.label(l('eperm')).ret(SeccompRet.Errno | EPERM);
  p.label(l('enosys')).ret(SeccompRet.Errno | ENOSYS);
  p.label(l('kill')).ret(SeccompRet.KillProcess);
}

/** The filter's instructions (see the file comment for its shape). */
export function defaultSeccompFilter(opts: SeccompFilterOptions = {}): BpfInstruction[] {
  const p = new BpfProgramBuilder();
  p.load(SeccompData.arch);
  for (const t of SYSCALL_TABLES) p.jumpEq(t.arch, `${t.name}:start`);
  p.ret(SeccompRet.KillProcess);
  for (const t of SYSCALL_TABLES) section(p, t, opts);
  return p.instructions();
}

/** The filter serialized for bubblewrap's `--seccomp FD`. */
export function defaultSeccompProgram(opts: SeccompFilterOptions = {}): Buffer {
  return serializeBpf(defaultSeccompFilter(opts));
}
