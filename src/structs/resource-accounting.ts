/**
 * The one definition of resource accounting shared by the scheduler (fit while placing) and
 * the server (the state store's per-node usage and the plan applier's fit check): what an
 * allocation holds and what a node can give. Both sides must agree, or a placement the
 * scheduler thinks fits is rejected by the applier, refreshed, and placed the same way again.
 */
import type { Allocation } from './alloc.js';
import type { Node } from './node.js';
import { heldResources } from './group-ask.js';

/** Resources held on a node by its live allocations: CPU MHz, memory MB, disk MB, ports in use. */
export interface NodeAllocatedUsage {
  cpu: number;
  memory: number;
  disk: number;
  ports: ReadonlySet<number>;
}

/** Amounts of cpu (MHz), memory (MiB) and disk (MiB). */
export interface ResourceTotals {
  cpu: number;
  memoryMB: number;
  diskMB: number;
}

/**
 * The resources and ports one allocation holds: its AllocatedResources (group ports from
 * Shared.Ports, else Shared.Networks, as Nomad's network index), or its group's ask when it has
 * none recorded.
 */
export function allocResources(a: Allocation): { totals: ResourceTotals; ports: number[] } {
  const h = heldResources(a);
  return { totals: { cpu: h.cpu, memoryMB: h.memory, diskMB: h.disk }, ports: h.ports };
}

/** Parses "22,80,8000-8100" into a set of ports; malformed parts are ignored. */
export function parsePortSpec(spec: string): Set<number> {
  const out = new Set<number>();
  for (const part of spec.split(',')) {
    const s = part.trim();
    if (s === '') continue;
    const m = /^(\d+)(?:-(\d+))?$/.exec(s);
    if (!m) continue;
    const lo = Number(m[1]);
    const hi = m[2] !== undefined ? Number(m[2]) : lo;
    for (let p = lo; p <= hi && p <= 65535; p++) out.add(p);
  }
  return out;
}

const reservedPortCache = new WeakMap<Node, ReadonlySet<number>>();

/** Ports a node keeps for itself. */
export function nodeReservedPorts(node: Node): ReadonlySet<number> {
  let s = reservedPortCache.get(node);
  if (!s) {
    s = parsePortSpec(node.ReservedResources?.Networks?.ReservedHostPorts ?? '');
    reservedPortCache.set(node, s);
  }
  return s;
}

const capacityCache = new WeakMap<Node, { cpu: number; memory: number; disk: number }>();

/**
 * Schedulable capacity of a node: its resources minus what it reserves for itself. A node that
 * reported no NodeResources (or part of them) has zero of what is missing: nothing fits on it.
 */
export function nodeCapacity(node: Node): { readonly cpu: number; readonly memory: number; readonly disk: number } {
  let c = capacityCache.get(node);
  if (!c) {
    const r = node.NodeResources;
    const res = node.ReservedResources;
    c = {
      cpu: (r?.Cpu?.CpuShares ?? 0) - (res?.Cpu?.CpuShares ?? 0),
      memory: (r?.Memory?.MemoryMB ?? 0) - (res?.Memory?.MemoryMB ?? 0),
      disk: (r?.Disk?.DiskMB ?? 0) - (res?.Disk?.DiskMB ?? 0),
    };
    capacityCache.set(node, c);
  }
  return c;
}
