/**
 * Resources in use on each node by its non-terminal allocations (cpu MHz, memory MiB, disk
 * MiB, ports), kept incrementally by the state store so the plan applier checks a node's fit
 * in time proportional to the plan, not to the node's allocations.
 */
import type { Allocation, Node } from '../../structs/index.js';

/** What allocations use (or a node offers). */
export interface ResourceTotals {
  cpu: number;
  memoryMB: number;
  diskMB: number;
}

/** The resources and ports one allocation holds. */
export function allocResources(a: Allocation): { totals: ResourceTotals; ports: number[] } {
  const r = a.AllocatedResources;
  const totals: ResourceTotals = { cpu: 0, memoryMB: 0, diskMB: 0 };
  const ports: number[] = [];
  if (!r) return { totals, ports };
  for (const t of Object.values(r.Tasks)) {
    totals.cpu += t.Cpu?.CpuShares ?? 0;
    totals.memoryMB += t.Memory?.MemoryMB ?? 0;
    for (const n of t.Networks ?? []) collectPorts(n, ports);
  }
  totals.diskMB += r.Shared?.DiskMB ?? 0;
  for (const n of r.Shared?.Networks ?? []) collectPorts(n, ports);
  for (const p of r.Shared?.Ports ?? []) if (p.Value > 0 && !ports.includes(p.Value)) ports.push(p.Value);
  return { totals, ports };
}

function collectPorts(n: { ReservedPorts: { Value: number }[] | null; DynamicPorts: { Value: number }[] | null }, out: number[]): void {
  for (const p of n.ReservedPorts ?? []) if (p.Value > 0 && !out.includes(p.Value)) out.push(p.Value);
  for (const p of n.DynamicPorts ?? []) if (p.Value > 0 && !out.includes(p.Value)) out.push(p.Value);
}

/** What a node can give to allocations: its resources minus what it reserves for itself. */
export function nodeCapacity(n: Node): { totals: ResourceTotals; reservedPorts: Set<number> } {
  const res = n.ReservedResources;
  const totals: ResourceTotals = {
    cpu: (n.NodeResources?.Cpu?.CpuShares ?? 0) - (res?.Cpu?.CpuShares ?? 0),
    memoryMB: (n.NodeResources?.Memory?.MemoryMB ?? 0) - (res?.Memory?.MemoryMB ?? 0),
    diskMB: (n.NodeResources?.Disk?.DiskMB ?? 0) - (res?.Disk?.DiskMB ?? 0),
  };
  return { totals, reservedPorts: parsePortSpec(res?.Networks?.ReservedHostPorts ?? '') };
}

/** Parses "22,80,8000-8010" into a set of ports; bad parts are ignored. */
export function parsePortSpec(spec: string): Set<number> {
  const out = new Set<number>();
  for (const part of spec.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(p);
    if (!m) continue;
    const lo = Number(m[1]);
    const hi = m[2] ? Number(m[2]) : lo;
    for (let i = lo; i <= hi && i - lo < 65536; i++) out.add(i);
  }
  return out;
}

/** Per node usage: totals and a port → holders count. */
export interface NodeUsageEntry {
  totals: ResourceTotals;
  ports: Map<number, number>;
}

/** Incrementally maintained usage of every node (live state only, no history). */
export class NodeUsage {
  private readonly byNode = new Map<string, NodeUsageEntry>();

  /** The usage of a node (zero when it holds nothing). */
  get(nodeId: string): NodeUsageEntry {
    return this.byNode.get(nodeId) ?? { totals: { cpu: 0, memoryMB: 0, diskMB: 0 }, ports: new Map() };
  }

  /** Accounts for an allocation change; terminal allocations hold nothing. */
  update(prev: Allocation | undefined, next: Allocation | undefined, isTerminal: (a: Allocation) => boolean): void {
    if (prev && !isTerminal(prev)) this.apply(prev, -1);
    if (next && !isTerminal(next)) this.apply(next, 1);
  }

  clear(): void {
    this.byNode.clear();
  }

  private apply(a: Allocation, sign: 1 | -1): void {
    let e = this.byNode.get(a.NodeID);
    if (!e) {
      e = { totals: { cpu: 0, memoryMB: 0, diskMB: 0 }, ports: new Map() };
      this.byNode.set(a.NodeID, e);
    }
    const { totals, ports } = allocResources(a);
    e.totals.cpu += sign * totals.cpu;
    e.totals.memoryMB += sign * totals.memoryMB;
    e.totals.diskMB += sign * totals.diskMB;
    for (const p of ports) {
      const n = (e.ports.get(p) ?? 0) + sign;
      if (n <= 0) e.ports.delete(p);
      else e.ports.set(p, n);
    }
  }
}
