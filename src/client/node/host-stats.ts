/**
 * The host's resource usage as Nomad's client reports it (GET /v1/client/stats, api.HostStats):
 * memory from /proc/meminfo, per-CPU user/system/idle percentages from /proc/stat (between this
 * sample and the previous one, so the first answer covers the time since boot), the disk of the
 * client's data directory, uptime, and the CPU consumed in MHz (Nomad's CPUTicksConsumed).
 */
import { readFileSync, statfsSync } from 'node:fs';
import * as os from 'node:os';

/** Nomad's HostMemoryStats (bytes). */
export interface HostMemoryStats {
  Total: number;
  Available: number;
  Used: number;
  Free: number;
}

/** Nomad's HostCPUStats (percentages). */
export interface HostCpuStats {
  CPU: string;
  User: number;
  System: number;
  Idle: number;
}

/** Nomad's HostDiskStats. */
export interface HostDiskStats {
  Device: string;
  Mountpoint: string;
  Size: number;
  Used: number;
  Available: number;
  UsedPercent: number;
  InodesUsedPercent: number;
}

/** Nomad's HostStats. */
export interface HostStats {
  Memory: HostMemoryStats;
  CPU: HostCpuStats[];
  DiskStats: HostDiskStats[];
  AllocDirStats: HostDiskStats;
  DeviceStats: unknown[];
  /** Seconds since boot. */
  Uptime: number;
  /** Unix nanoseconds. */
  Timestamp: number;
  /** CPU used across all cores, in MHz (busy fraction × total compute). */
  CPUTicksConsumed: number;
}

/** One CPU's cumulative jiffies from /proc/stat. */
interface CpuTimes {
  user: number;
  system: number;
  idle: number;
  total: number;
}

/** Parses the per-CPU lines ("cpu0 …") of /proc/stat. */
export function parseProcStatCpus(text: string): Map<string, CpuTimes> {
  const out = new Map<string, CpuTimes>();
  for (const line of text.split('\n')) {
    const m = /^(cpu\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const v = m[2]!.trim().split(/\s+/).map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = v;
    out.set(m[1]!, { user: user + nice, system: system + irq + softirq, idle: idle + iowait, total: user + nice + system + idle + iowait + irq + softirq + steal });
  }
  return out;
}

/** Parses /proc/meminfo into Nomad's memory stats (bytes). */
export function parseMemInfo(text: string): HostMemoryStats {
  const kb = (key: string): number => {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : 0;
  };
  const total = kb('MemTotal');
  const free = kb('MemFree');
  const available = kb('MemAvailable') || free;
  return { Total: total, Available: available, Used: total - available, Free: free };
}

/** The mount (device, mountpoint) holding `path`, from /proc/mounts text: the longest matching mountpoint. */
export function mountOf(path: string, mounts: string): { device: string; mountpoint: string } {
  let best = { device: '', mountpoint: '/' };
  let bestLen = -1;
  for (const line of mounts.split('\n')) {
    const [device, mountpoint] = line.split(' ');
    if (!device || !mountpoint) continue;
    const mp = mountpoint.replace(/\\040/g, ' ');
    const inside = mp === '/' || path === mp || path.startsWith(mp.endsWith('/') ? mp : `${mp}/`);
    if (inside && mp.length > bestLen) {
      best = { device, mountpoint: mp };
      bestLen = mp.length;
    }
  }
  return best;
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Samples the host; keeps the previous CPU sample so percentages cover the interval between calls. */
export class HostStatsCollector {
  private previous = new Map<string, CpuTimes>();

  constructor(
    private readonly dataDir: string,
    private readonly totalComputeMhz: number,
  ) {}

  /** A new sample of the host's usage; `nowMs` stamps it. */
  collect(nowMs: number): HostStats {
    const cpus = parseProcStatCpus(readText('/proc/stat'));
    const cpu: HostCpuStats[] = [];
    let busy = 0;
    let total = 0;
    for (const [name, now] of cpus) {
      const before = this.previous.get(name) ?? { user: 0, system: 0, idle: 0, total: 0 };
      const span = now.total - before.total;
      const pct = (d: number) => (span > 0 ? round2((100 * d) / span) : 0);
      cpu.push({ CPU: name, User: pct(now.user - before.user), System: pct(now.system - before.system), Idle: pct(now.idle - before.idle) });
      busy += now.user - before.user + now.system - before.system;
      total += span;
    }
    this.previous = cpus;
    const disk = this.diskStats();
    const uptime = Number(readText('/proc/uptime').split(' ')[0]) || os.uptime();
    return {
      Memory: parseMemInfo(readText('/proc/meminfo')),
      CPU: cpu,
      DiskStats: [disk],
      AllocDirStats: disk,
      DeviceStats: [],
      Uptime: Math.floor(uptime),
      Timestamp: nowMs * 1_000_000,
      CPUTicksConsumed: total > 0 ? round2((busy / total) * this.totalComputeMhz) : 0,
    };
  }

  private diskStats(): HostDiskStats {
    const mount = mountOf(this.dataDir, readText('/proc/mounts'));
    try {
      const fs = statfsSync(this.dataDir);
      const size = fs.blocks * fs.bsize;
      const available = fs.bavail * fs.bsize;
      const used = size - fs.bfree * fs.bsize;
      const inodesUsed = fs.files > 0 ? (100 * (fs.files - fs.ffree)) / fs.files : 0;
      return {
        Device: mount.device,
        Mountpoint: mount.mountpoint,
        Size: size,
        Used: used,
        Available: available,
        UsedPercent: size > 0 ? round2((100 * used) / (used + available)) : 0,
        InodesUsedPercent: round2(inodesUsed),
      };
    } catch {
      return { Device: mount.device, Mountpoint: mount.mountpoint, Size: 0, Used: 0, Available: 0, UsedPercent: 0, InodesUsedPercent: 0 };
    }
  }
}
