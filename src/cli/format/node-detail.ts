/**
 * `node status <id>` as Nomad prints it: the node's fields (with its uptime from the client's
 * host stats), its events (newest first), the resources its running allocations hold, what those
 * allocations use, what the host uses, then its allocations. A figure the client did not answer
 * is left out, as Nomad leaves it out.
 */
import type { AllocResourceUsage } from '../../http/routes/client-alloc.js';
import type { HostStats } from '../../client/node/host-stats.js';
import { allocStub, type Allocation } from '../../structs/alloc.js';
import { formatDuration } from '../../structs/duration.js';
import type { Node, NodeEvent } from '../../structs/index.js';
import { formatAllocTable } from '../commands/job-status.js';
import { formatColumns, formatKV } from './columns.js';
import { iBytes, iBytesFromMiB } from './ibytes.js';
import { formatIsoTime } from './time-format.js';

/** What the node's client answered besides the node itself. */
export interface NodeDetailStats {
  /** GET /v1/client/stats of the node, or null. */
  host: HostStats | null;
  /** The usage of each running allocation, or null when one could not be read. */
  allocs: AllocResourceUsage[] | null;
}

/** The node's schedulable capacity: its resources less what it reserves (Nomad's computeNodeTotalResources). */
function capacity(n: Node): { cpu: number; memMiB: number; diskMiB: number } {
  const r = n.NodeResources;
  const res = n.ReservedResources;
  return { cpu: r.Cpu.CpuShares - (res?.Cpu.CpuShares ?? 0), memMiB: r.Memory.MemoryMB - (res?.Memory.MemoryMB ?? 0), diskMiB: r.Disk.DiskMB - (res?.Disk.DiskMB ?? 0) };
}

function drivers(n: Node): string {
  return Object.entries(n.Drivers ?? {})
    .filter(([, d]) => d.Detected)
    .map(([name, d]) => (d.Healthy ? name : `${name} (unhealthy)`))
    .sort()
    .join(',');
}

/** The "Node Events" table, newest first; -verbose adds each event's details. */
export function formatNodeEvents(events: readonly NodeEvent[], verbose = false): string {
  const rows = [verbose ? ['Time', 'Subsystem', 'Message', 'Details'] : ['Time', 'Subsystem', 'Message']];
  for (const e of [...events].reverse()) {
    const subsystem = e.Details?.driver ? `Driver: ${e.Details.driver}` : e.Subsystem;
    const row = [formatIsoTime(e.Timestamp), subsystem, e.Message];
    if (verbose) row.push(Object.entries(e.Details ?? {}).map(([k, v]) => `${k}: ${v}`).join(', '));
    rows.push(row);
  }
  return formatColumns(rows);
}

function allocatedResources(n: Node, running: readonly Allocation[]): string {
  let cpu = 0;
  let mem = 0;
  let disk = 0;
  for (const a of running) {
    for (const t of Object.values(a.AllocatedResources?.Tasks ?? {})) {
      cpu += t.Cpu.CpuShares;
      mem += t.Memory.MemoryMB;
    }
    disk += a.AllocatedResources?.Shared.DiskMB ?? 0;
  }
  const total = capacity(n);
  return formatColumns([
    ['CPU', 'Memory', 'Disk'],
    [`${cpu}/${total.cpu} MHz`, `${iBytesFromMiB(mem)}/${iBytesFromMiB(total.memMiB)}`, `${iBytesFromMiB(disk)}/${iBytesFromMiB(total.diskMiB)}`],
  ]);
}

function allocUtilization(n: Node, usages: readonly AllocResourceUsage[]): string {
  let cpu = 0;
  let mem = 0;
  for (const u of usages) {
    cpu += u.ResourceUsage.CpuStats.TotalTicks;
    const m = u.ResourceUsage.MemoryStats;
    mem += m.Usage > 0 ? m.Usage : m.RSS;
  }
  const total = capacity(n);
  return formatColumns([
    ['CPU', 'Memory'],
    [`${Math.floor(cpu)}/${total.cpu} MHz`, `${iBytes(mem)}/${iBytesFromMiB(total.memMiB)}`],
  ]);
}

function hostUtilization(n: Node, h: HostStats): string {
  const device = n.Attributes?.['unique.storage.volume'] ?? '';
  const disk = h.DiskStats.find((d) => d.Device === device);
  const cpu = `${Math.floor(h.CPUTicksConsumed)}/${n.NodeResources.Cpu.CpuShares} MHz`;
  const mem = `${iBytes(h.Memory.Used)}/${iBytes(h.Memory.Total)}`;
  return formatColumns([
    ['CPU', 'Memory', 'Disk'],
    [cpu, mem, disk ? `${iBytes(disk.Used)}/${iBytes(disk.Size)}` : `(${device})`],
  ]);
}

/** The detail view of one node. */
export function formatNodeDetail(n: Node, allocs: Allocation[], nowMs: number, verbose = false, stats: NodeDetailStats = { host: null, allocs: null }): string {
  const pairs: [string, string][] = [
    ['ID', n.ID],
    ['Name', n.Name],
    ['Node Pool', n.NodePool],
    ['Class', n.NodeClass || '<none>'],
    ['DC', n.Datacenter],
    ['Drain', String(n.Drain)],
    ['Eligibility', n.SchedulingEligibility],
    ['Status', n.Status],
    ['HTTP Addr', n.HTTPAddr],
  ];
  if (stats.host) pairs.push(['Uptime', formatDuration(Math.floor(stats.host.Uptime) * 1e9)]);
  pairs.push(['Host Volumes', Object.keys(n.HostVolumes ?? {}).sort().join(',') || '<none>']);
  pairs.push(['Driver Status', drivers(n) || '<none>']);
  const running = allocs.filter((a) => a.ClientStatus === 'running');
  const parts = [formatKV(pairs), `Node Events\n${formatNodeEvents(n.Events ?? [], verbose)}`, `Allocated Resources\n${allocatedResources(n, running)}`];
  if (stats.allocs) parts.push(`Allocation Resource Utilization\n${allocUtilization(n, stats.allocs)}`);
  if (stats.host) parts.push(`Host Resource Utilization\n${hostUtilization(n, stats.host)}`);
  parts.push(`Allocations\n${formatAllocTable(allocs.map(allocStub), nowMs, verbose)}`);
  return parts.join('\n\n');
}
