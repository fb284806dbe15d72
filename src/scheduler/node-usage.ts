/**
 * Per-evaluation view of what each node has in use: the live allocations in state, minus
 * those this plan stops, plus those this plan places. Computed lazily, only for nodes the
 * scheduler looks at, so a placement never rescans the cluster.
 */
import type { Allocation, Node } from '../structs/index.js';
import type { SchedulerState } from './interfaces.js';
import { heldResources } from '../structs/group-ask.js';
import { isLiveAlloc } from '../structs/alloc.js';
import { nodeCapacity, nodeReservedPorts, parsePortSpec, type NodeAllocatedUsage } from '../structs/resource-accounting.js';

// Shared with the server's accounting; re-exported for the scheduler's existing imports.
export { nodeCapacity, nodeReservedPorts, parsePortSpec };

/** Resources in use on one node as this evaluation sees it. */
export interface ProposedNodeUsage {
  cpu: number;
  memory: number;
  disk: number;
  /** Ports held by allocations in state (shared, never mutated). */
  basePorts: ReadonlySet<number>;
  /** Ports freed by stops in this plan (the shared empty set until the first). */
  freedPorts: ReadonlySet<number>;
  /** Ports taken by placements in this plan (the shared empty set until the first). */
  addedPorts: ReadonlySet<number>;
}

// Most nodes of an evaluation never see a port change: they share this until they do.
const NONE: ReadonlySet<number> = new Set();

function writablePorts(s: ReadonlySet<number>): Set<number> {
  return s === NONE ? new Set() : (s as Set<number>);
}

interface BaseUsage extends NodeAllocatedUsage {
  ports: Set<number>;
}

// The state store may hand out the same array for an unchanged node across evaluations; then
// its sum is reused. Keyed weakly, so nothing is kept alive.
const baseCache = new WeakMap<readonly Allocation[], BaseUsage>();

function baseUsage(allocs: readonly Allocation[]): BaseUsage {
  let b = baseCache.get(allocs);
  if (b) return b;
  b = { cpu: 0, memory: 0, disk: 0, ports: new Set() };
  for (const a of allocs) {
    if (!isLiveAlloc(a)) continue;
    const ar = a.AllocatedResources;
    if (ar && !hasPorts(a)) {
      // Common case without networks: sum in place, allocating nothing.
      for (const k in ar.Tasks) {
        const t = ar.Tasks[k]!;
        b.cpu += t.Cpu.CpuShares;
        b.memory += t.Memory.MemoryMB;
      }
      b.disk += ar.Shared.DiskMB;
      continue;
    }
    const h = heldResources(a);
    b.cpu += h.cpu;
    b.memory += h.memory;
    b.disk += h.disk;
    for (const p of h.ports) b.ports.add(p);
  }
  baseCache.set(allocs, b);
  return b;
}

function hasPorts(a: Allocation): boolean {
  const ar = a.AllocatedResources!;
  if ((ar.Shared.Ports?.length ?? 0) > 0 || (ar.Shared.Networks?.length ?? 0) > 0) return true;
  for (const k in ar.Tasks) if ((ar.Tasks[k]!.Networks?.length ?? 0) > 0) return true;
  return false;
}

/** True when a port is in use on the node as this evaluation sees it. */
export function portInUse(node: Node, u: ProposedNodeUsage, port: number): boolean {
  if (u.addedPorts.has(port)) return true;
  if (nodeReservedPorts(node).has(port)) return true;
  return u.basePorts.has(port) && !u.freedPorts.has(port);
}

/** The proposed usage of every node, for one evaluation. */
export class ProposedUsage {
  private readonly usage = new Map<string, ProposedNodeUsage>();
  private readonly released = new Map<string, Allocation[]>();

  constructor(private readonly state: Pick<SchedulerState, 'allocsByNode' | 'nodeAllocatedUsage'>) {}

  /** The node's usage, computing it on first use. */
  get(nodeId: string): ProposedNodeUsage {
    let u = this.usage.get(nodeId);
    if (u) return u;
    const b = this.state.nodeAllocatedUsage ? this.state.nodeAllocatedUsage(nodeId) : baseUsage(this.state.allocsByNode(nodeId));
    u = { cpu: b.cpu, memory: b.memory, disk: b.disk, basePorts: b.ports, freedPorts: NONE, addedPorts: NONE };
    for (const a of this.released.get(nodeId) ?? []) subtract(u, a);
    this.usage.set(nodeId, u);
    return u;
  }

  /**
   * The node's cpu, memory and disk in use as this plan sees it, without keeping an entry for
   * it: reading every candidate of a large cluster then allocates nothing for the many nodes the
   * plan never changes. Read-only.
   */
  peek(nodeId: string): { readonly cpu: number; readonly memory: number; readonly disk: number } {
    const u = this.usage.get(nodeId);
    if (u) return u;
    if (this.released.has(nodeId)) return this.get(nodeId);
    return this.state.nodeAllocatedUsage ? this.state.nodeAllocatedUsage(nodeId) : baseUsage(this.state.allocsByNode(nodeId));
  }

  /** Frees a live allocation this plan stops. Call at most once per allocation. */
  release(a: Allocation): void {
    if (!isLiveAlloc(a)) return;
    const u = this.usage.get(a.NodeID);
    if (u) subtract(u, a);
    else {
      let list = this.released.get(a.NodeID);
      if (!list) this.released.set(a.NodeID, (list = []));
      list.push(a);
    }
  }

  /** Records a placement on a node. */
  add(nodeId: string, cpu: number, memory: number, disk: number, ports: readonly number[]): void {
    const u = this.get(nodeId);
    u.cpu += cpu;
    u.memory += memory;
    u.disk += disk;
    if (ports.length === 0) return;
    const added = (u.addedPorts = writablePorts(u.addedPorts));
    const freed = (u.freedPorts = writablePorts(u.freedPorts));
    for (const p of ports) {
      added.add(p);
      freed.delete(p);
    }
  }
}

function subtract(u: ProposedNodeUsage, a: Allocation): void {
  const h = heldResources(a);
  u.cpu -= h.cpu;
  u.memory -= h.memory;
  u.disk -= h.disk;
  if (h.ports.length === 0) return;
  const freed = (u.freedPorts = writablePorts(u.freedPorts));
  for (const p of h.ports) freed.add(p);
}
