/**
 * What of the kernel's /proc (and /sys, when a chroot_env brings it in) an exec task may not
 * write or read: the read-only and masked paths every OCI runtime applies by default (runc's and
 * moby's default spec), as bubblewrap arguments placed after the sandbox's `--proc /proc`.
 *
 * A private procfs is not enough: `/proc/sys` is the host's sysctl tree whatever the pid
 * namespace, and bubblewrap leaves it writable, so a task running as root could set
 * `kernel.core_pattern` — a pipe there runs a program as host root on the next crash.
 */

/** Bound read-only over themselves (the host's view, which is the same kernel's). */
export const READONLY_PATHS: readonly string[] = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

/** Files hidden behind /dev/null: kernel memory, keyrings, timers and scheduler internals. */
export const MASKED_FILES: readonly string[] = [
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/sched_debug',
  '/proc/timer_list',
  '/proc/timer_stats',
];

/** Directories hidden behind an empty read-only tmpfs: hardware and firmware interfaces. */
export const MASKED_DIRS: readonly string[] = ['/proc/acpi', '/proc/asound', '/proc/scsi', '/sys/firmware', '/sys/devices/virtual/powercap'];

/**
 * The bubblewrap arguments confining /proc (and /sys): `exists` says whether a host path exists
 * (a path the kernel lacks cannot be bound over); `chrootEnv` (host path → path inside) says what
 * of /sys the sandbox shows at all — by default nothing, and then nothing of it is masked.
 */
export function procConfinementArgs(exists: (hostPath: string) => boolean, chrootEnv: Readonly<Record<string, string>>): string[] {
  const args: string[] = [];
  for (const p of READONLY_PATHS) if (exists(p)) args.push('--ro-bind', p, p);
  for (const p of MASKED_FILES) if (exists(p)) args.push('--ro-bind', '/dev/null', p);
  for (const p of MASKED_DIRS) {
    const host = p.startsWith('/proc/') ? p : hostPathInside(p, chrootEnv);
    if (host !== undefined && exists(host)) args.push('--tmpfs', p, '--remount-ro', p);
  }
  return args;
}

/** The host path shown at `inside` through a chroot_env entry, if any entry covers it. */
function hostPathInside(inside: string, chrootEnv: Readonly<Record<string, string>>): string | undefined {
  let best: [string, string] | undefined;
  for (const [src, dest] of Object.entries(chrootEnv)) {
    const d = dest.replace(/\/+$/, '') || '/';
    const covers = d === '/' || inside === d || inside.startsWith(`${d}/`);
    if (covers && (!best || d.length > best[1].length)) best = [src.replace(/\/+$/, ''), d];
  }
  if (!best) return undefined;
  const [src, dest] = best;
  return `${src}${dest === '/' ? inside : inside.slice(dest.length)}` || '/';
}
