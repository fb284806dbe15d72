/**
 * Syscall numbers of the architectures the exec sandbox's seccomp filter knows, for the syscalls
 * the filter names — no more. Numbers are from the kernel's uapi headers
 * (`asm/unistd_64.h`, `asm/unistd_32.h`, `asm-generic/unistd.h`); a syscall an architecture does
 * not have is simply absent from its table.
 *
 * i386 is here because an x86_64 kernel also runs 32-bit programs (`int 0x80`, audit arch
 * I386) — Nomad's default chroot binds /lib32 for them — and a filter that only looked at
 * x86_64 numbers would let them call anything.
 */

/** `AUDIT_ARCH_*` values (linux/audit.h): what `seccomp_data.arch` holds. */
export const AuditArch = {
  X86_64: 0xc000003e,
  I386: 0x40000003,
  AARCH64: 0xc00000b7,
} as const;
export type AuditArch = (typeof AuditArch)[keyof typeof AuditArch];

/** The names the filter uses; every table maps a subset of them. */
export type SyscallName =
  | 'acct' | 'add_key' | 'bpf' | 'clock_adjtime' | 'clock_adjtime64' | 'clock_settime' | 'clock_settime64'
  | 'clone' | 'clone3' | 'create_module' | 'delete_module' | 'finit_module' | 'fsconfig' | 'fsmount' | 'fsopen'
  | 'fspick' | 'get_kernel_syms' | 'init_module' | 'io_uring_enter' | 'io_uring_register' | 'io_uring_setup'
  | 'ioperm' | 'iopl' | 'kcmp' | 'kexec_file_load' | 'kexec_load' | 'keyctl' | 'lookup_dcookie' | 'mount'
  | 'mount_setattr' | 'move_mount' | 'name_to_handle_at' | 'nfsservctl' | 'open_by_handle_at' | 'open_tree'
  | 'perf_event_open' | 'pivot_root' | 'process_vm_readv' | 'process_vm_writev' | 'ptrace' | 'query_module'
  | 'quotactl' | 'quotactl_fd' | 'reboot' | 'request_key' | 'setns' | 'settimeofday' | 'stime' | 'swapoff'
  | 'swapon' | '_sysctl' | 'sysfs' | 'syslog' | 'umount' | 'umount2' | 'unshare' | 'uselib' | 'userfaultfd'
  | 'ustat' | 'vm86' | 'vm86old';

/** One architecture: its audit value and syscall numbers. */
export interface SyscallTable {
  /** A short name for labels and messages. */
  name: string;
  arch: AuditArch;
  numbers: Readonly<Partial<Record<SyscallName, number>>>;
  /**
   * Syscall numbers at or above this are another ABI sharing the audit arch (x86_64's x32 ABI
   * sets bit 30): refused whole, as their numbers would dodge the table.
   */
  foreignAbiFrom?: number;
}

export const X86_64_SYSCALLS: SyscallTable = {
  name: 'x86_64',
  arch: AuditArch.X86_64,
  foreignAbiFrom: 0x40000000,
  numbers: {
    acct: 163, add_key: 248, bpf: 321, clock_adjtime: 305, clock_settime: 227, clone: 56, clone3: 435,
    create_module: 174, delete_module: 176, finit_module: 313, fsconfig: 431, fsmount: 432, fsopen: 430,
    fspick: 433, get_kernel_syms: 177, init_module: 175, io_uring_enter: 426, io_uring_register: 427,
    io_uring_setup: 425, ioperm: 173, iopl: 172, kcmp: 312, kexec_file_load: 320, kexec_load: 246, keyctl: 250,
    lookup_dcookie: 212, mount: 165, mount_setattr: 442, move_mount: 429, name_to_handle_at: 303,
    nfsservctl: 180, open_by_handle_at: 304, open_tree: 428, perf_event_open: 298, pivot_root: 155,
    process_vm_readv: 310, process_vm_writev: 311, ptrace: 101, query_module: 178, quotactl: 179,
    quotactl_fd: 443, reboot: 169, request_key: 249, setns: 308, settimeofday: 164, swapoff: 168, swapon: 167,
    _sysctl: 156, sysfs: 139, syslog: 103, umount2: 166, unshare: 272, uselib: 134, userfaultfd: 323, ustat: 136,
  },
};

export const I386_SYSCALLS: SyscallTable = {
  name: 'i386',
  arch: AuditArch.I386,
  numbers: {
    acct: 51, add_key: 286, bpf: 357, clock_adjtime: 343, clock_adjtime64: 405, clock_settime: 264,
    clock_settime64: 404, clone: 120, clone3: 435, create_module: 127, delete_module: 129, finit_module: 350,
    fsconfig: 431, fsmount: 432, fsopen: 430, fspick: 433, get_kernel_syms: 130, init_module: 128,
    io_uring_enter: 426, io_uring_register: 427, io_uring_setup: 425, ioperm: 101, iopl: 110, kcmp: 349,
    kexec_load: 283, keyctl: 288, lookup_dcookie: 253, mount: 21, mount_setattr: 442, move_mount: 429,
    name_to_handle_at: 341, nfsservctl: 169, open_by_handle_at: 342, open_tree: 428, perf_event_open: 336,
    pivot_root: 217, process_vm_readv: 347, process_vm_writev: 348, ptrace: 26, query_module: 167, quotactl: 131,
    quotactl_fd: 443, reboot: 88, request_key: 287, setns: 346, settimeofday: 79, stime: 25, swapoff: 115,
    swapon: 87, _sysctl: 149, sysfs: 135, syslog: 103, umount: 22, umount2: 52, unshare: 310, uselib: 86,
    userfaultfd: 374, ustat: 62, vm86: 166, vm86old: 113,
  },
};

export const AARCH64_SYSCALLS: SyscallTable = {
  name: 'aarch64',
  arch: AuditArch.AARCH64,
  numbers: {
    acct: 89, add_key: 217, bpf: 280, clock_adjtime: 266, clock_settime: 112, clone: 220, clone3: 435,
    delete_module: 106, finit_module: 273, fsconfig: 431, fsmount: 432, fsopen: 430, fspick: 433,
    init_module: 105, io_uring_enter: 426, io_uring_register: 427, io_uring_setup: 425, kcmp: 272,
    kexec_file_load: 294, kexec_load: 104, keyctl: 219, lookup_dcookie: 18, mount: 40, mount_setattr: 442,
    move_mount: 429, name_to_handle_at: 264, nfsservctl: 42, open_by_handle_at: 265, open_tree: 428,
    perf_event_open: 241, pivot_root: 41, process_vm_readv: 270, process_vm_writev: 271, ptrace: 117,
    quotactl: 60, quotactl_fd: 443, reboot: 142, request_key: 218, setns: 268, settimeofday: 170, swapoff: 225,
    swapon: 224, syslog: 116, umount2: 39, unshare: 97, userfaultfd: 282,
  },
};

/** Every table the filter is built from, in the order the filter dispatches on them. */
export const SYSCALL_TABLES: readonly SyscallTable[] = [X86_64_SYSCALLS, I386_SYSCALLS, AARCH64_SYSCALLS];
