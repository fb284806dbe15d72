/**
 * What the web UI's topology and clients pages show of a large cluster without reading every
 * node and allocation into the browser: each node's capacity and what its live allocations
 * hold (one row per node, paged like any list), and the whole cluster summed by datacenter.
 * Nomad's UI reads /v1/nodes and /v1/allocations whole and sums them in the browser; at 10,000
 * nodes and 50,000 allocations that is tens of megabytes per refresh, so Caravan sums here.
 */
import { isTerminalAlloc, type Allocation } from '../../structs/alloc.js';
import type { Node } from '../../structs/node.js';

/** An amount in use out of what can be scheduled (CPU in MHz, memory in MB). */
export interface UsageAmount {
  Capacity: number;
  Allocated: number;
}

/** One node's row: who it is and what its live allocations hold of it. */
export interface NodeUsage {
  ID: string;
  Name: string;
  Datacenter: string;
  NodePool: string;
  NodeClass: string;
  Status: string;
  SchedulingEligibility: string;
  Drain: boolean;
  /** Live allocations (not terminal): the ones holding resources. */
  Allocations: number;
  Cpu: UsageAmount;
  Memory: UsageAmount;
}

/** Nodes and their usage summed over a datacenter or the cluster. */
export interface UsageTotals {
  Nodes: number;
  /** Nodes by status (ready, down, initializing, disconnected). */
  Statuses: Record<string, number>;
  Ineligible: number;
  Draining: number;
  Allocations: number;
  Cpu: UsageAmount;
  Memory: UsageAmount;
}

/** The cluster summed, and per datacenter (sorted by name). */
export interface ClusterUsage extends UsageTotals {
  Datacenters: Array<UsageTotals & { Name: string }>;
}

/** What a node's live allocations hold, and what it offers after its reservations. */
export function nodeUsage(node: Node, allocs: readonly Allocation[]): NodeUsage {
  let cpu = 0;
  let mem = 0;
  let live = 0;
  for (const a of allocs) {
    if (isTerminalAlloc(a)) continue;
    live++;
    for (const t of Object.values(a.AllocatedResources?.Tasks ?? {})) {
      cpu += t.Cpu?.CpuShares ?? 0;
      mem += t.Memory?.MemoryMB ?? 0;
    }
  }
  return {
    ID: node.ID,
    Name: node.Name,
    Datacenter: node.Datacenter,
    NodePool: node.NodePool,
    NodeClass: node.NodeClass,
    Status: node.Status,
    SchedulingEligibility: node.SchedulingEligibility,
    Drain: node.DrainStrategy != null,
    Allocations: live,
    Cpu: { Capacity: (node.NodeResources?.Cpu.CpuShares ?? 0) - (node.ReservedResources?.Cpu.CpuShares ?? 0), Allocated: cpu },
    Memory: { Capacity: (node.NodeResources?.Memory.MemoryMB ?? 0) - (node.ReservedResources?.Memory.MemoryMB ?? 0), Allocated: mem },
  };
}

function emptyTotals(): UsageTotals {
  return { Nodes: 0, Statuses: {}, Ineligible: 0, Draining: 0, Allocations: 0, Cpu: { Capacity: 0, Allocated: 0 }, Memory: { Capacity: 0, Allocated: 0 } };
}

function add(t: UsageTotals, u: NodeUsage): void {
  t.Nodes++;
  t.Statuses[u.Status] = (t.Statuses[u.Status] ?? 0) + 1;
  if (u.SchedulingEligibility !== 'eligible') t.Ineligible++;
  if (u.Drain) t.Draining++;
  t.Allocations += u.Allocations;
  t.Cpu.Capacity += u.Cpu.Capacity;
  t.Cpu.Allocated += u.Cpu.Allocated;
  t.Memory.Capacity += u.Memory.Capacity;
  t.Memory.Allocated += u.Memory.Allocated;
}

/** Sums node rows over the cluster and per datacenter. */
export function clusterUsage(rows: readonly NodeUsage[]): ClusterUsage {
  const all = emptyTotals();
  const byDc = new Map<string, UsageTotals>();
  for (const u of rows) {
    add(all, u);
    let dc = byDc.get(u.Datacenter);
    if (!dc) byDc.set(u.Datacenter, (dc = emptyTotals()));
    add(dc, u);
  }
  const names = [...byDc.keys()].sort();
  return { ...all, Datacenters: names.map((Name) => ({ Name, ...byDc.get(Name)! })) };
}
