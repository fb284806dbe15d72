/**
 * The resource parts of `alloc status`, as Nomad prints them: the "Allocation Addresses" table
 * of the group network's ports, each task's "Task Resources:" (what it was given, and what it
 * uses when the client answered its stats: `used/asked MHz`, `used/asked` memory) and, with
 * `-stats`, its "Memory Stats" and "CPU Stats" tables of what the client measured.
 */
import type { AllocResourceUsage, ResourceUsage } from '../../http/routes/client-alloc.js';
import type { Allocation } from '../../structs/alloc.js';
import { MEMORY_MAX_UNLIMITED, type NetworkResource, type Port } from '../../structs/resources.js';
import { formatColumns } from './columns.js';
import { iBytes, iBytesFromMiB } from './ibytes.js';

function hasPorts(n: NetworkResource | undefined): n is NetworkResource {
  return !!n && ((n.DynamicPorts?.length ?? 0) > 0 || (n.ReservedPorts?.length ?? 0) > 0);
}

/** The "Allocation Addresses" section (header included), or null when the group network has no ports. */
export function formatAllocAddresses(a: Allocation): string | null {
  const nw = a.AllocatedResources?.Shared.Networks?.[0];
  if (!hasPorts(nw)) return null;
  const row = (p: Port): string[] => ['yes', `${nw.IP}:${p.Value}${p.To > 0 ? ` -> ${p.To}` : ''}`];
  // As Nomad: reserved ports are listed too, and (as Nomad does) marked "yes".
  const rows = [['Label', 'Dynamic', 'Address'], ...[...(nw.DynamicPorts ?? []), ...(nw.ReservedPorts ?? [])].map((p) => [p.Label, ...row(p)])];
  const mode = nw.Mode ? ` (mode = ${JSON.stringify(nw.Mode)})` : '';
  return `Allocation Addresses${mode}\n${formatColumns(rows)}`;
}

/** A task's "Task Resources:" section, or null when the allocation holds nothing for it. */
export function formatTaskResources(a: Allocation, task: string, usage: ResourceUsage | null): string | null {
  const r = a.AllocatedResources?.Tasks[task];
  if (!r) return null;
  const addrs = (r.Networks ?? []).flatMap((nw) => [...(nw.DynamicPorts ?? []), ...(nw.ReservedPorts ?? [])].map((p) => `${p.Label}: ${nw.IP}:${p.Value}`));
  const cores = r.Cpu.ReservedCores?.length ?? 0;
  let cpu = String(r.Cpu.CpuShares);
  let mem = iBytesFromMiB(r.Memory.MemoryMB);
  if (usage) {
    cpu = `${Math.floor(usage.CpuStats.TotalTicks)}/${cpu}`;
    const m = usage.MemoryStats;
    const used = m.RSS === 0 && !m.Measured.includes('RSS') ? m.Usage : m.RSS;
    mem = `${iBytes(used)}/${mem}`;
  }
  const maxMB = r.Memory.MemoryMaxMB;
  const max = maxMB === MEMORY_MAX_UNLIMITED ? 'Max: unlimited' : maxMB && maxMB !== r.Memory.MemoryMB ? `Max: ${iBytesFromMiB(maxMB)}` : '';
  const rows = [[cores > 0 ? `CPU (${cores} cores)` : 'CPU', 'Memory', 'Disk', 'Addresses'], [`${cpu} MHz`, mem, iBytesFromMiB(a.AllocatedResources?.Shared.DiskMB ?? 0), addrs[0] ?? '']];
  if (max || addrs[1]) rows.push(['', max, '', addrs[1] ?? '']);
  for (const extra of addrs.slice(2)) rows.push(['', '', '', extra]);
  return `Task Resources:\n${formatColumns(rows)}`;
}

const MEMORY_VALUES: Record<string, (u: ResourceUsage['MemoryStats']) => string> = {
  RSS: (m) => iBytes(m.RSS),
  Cache: (m) => iBytes(m.Cache),
  Swap: (m) => iBytes(m.Swap),
  Usage: (m) => iBytes(m.Usage),
  'Max Usage': (m) => iBytes(m.MaxUsage),
  'Kernel Usage': (m) => iBytes(m.KernelUsage),
  'Kernel Max Usage': (m) => iBytes(m.KernelMaxUsage),
};

const CPU_VALUES: Record<string, (c: ResourceUsage['CpuStats']) => string> = {
  Percent: (c) => `${c.Percent.toFixed(2)}%`,
  'Throttled Periods': (c) => String(c.ThrottledPeriods),
  'Throttled Time': (c) => String(c.ThrottledTime),
  'User Mode': (c) => `${c.UserMode.toFixed(2)}%`,
  'System Mode': (c) => `${c.SystemMode.toFixed(2)}%`,
  'Total Ticks': (c) => String(Math.floor(c.TotalTicks)),
};

/** The `-stats` tables of one task: what the client measured, in name order. */
export function formatResourceUsage(u: ResourceUsage): string {
  const parts: string[] = [];
  const mem = [...u.MemoryStats.Measured].sort().filter((k) => MEMORY_VALUES[k]);
  if (mem.length > 0) parts.push(`Memory Stats\n${formatColumns([mem, mem.map((k) => MEMORY_VALUES[k]!(u.MemoryStats))])}`);
  const cpu = [...u.CpuStats.Measured].sort().filter((k) => CPU_VALUES[k]);
  if (cpu.length > 0) parts.push(`CPU Stats\n${formatColumns([cpu, cpu.map((k) => CPU_VALUES[k]!(u.CpuStats))])}`);
  return parts.join('\n\n');
}

/** The usage of `task` in an allocation's stats, or null. */
export function taskUsage(stats: AllocResourceUsage | null, task: string): ResourceUsage | null {
  return stats?.Tasks[task]?.ResourceUsage ?? null;
}
