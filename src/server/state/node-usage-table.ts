/**
 * Resources in use on each node by its non-terminal allocations (cpu MHz, memory MiB, disk
 * MiB, ports), kept incrementally by the state store so the plan applier checks a node's fit
 * in time proportional to the plan, not to the node's allocations.
 */
import type { Allocation } from '../../structs/index.js';
import { CowTable, type Epoch, type EpochClock } from './cow-table.js';
import { allocResources, type NodeAllocatedUsage, type ResourceTotals } from '../../structs/resource-accounting.js';

export type { ResourceTotals };

/** Per node usage: totals and a port → holders count. */
export interface NodeUsageEntry {
  totals: ResourceTotals;
  ports: Map<number, number>;
}

/** A node's usage in the table, stamped with the epoch it may be mutated in (see CowIndex). */
interface StoredUsage {
  epoch: number;
  usage: NodeUsageEntry;
  /** The scheduler's view, built on first read; dropped when the usage changes. */
  view: NodeAllocatedUsage | null;
}

const NO_PORTS: ReadonlySet<number> = new Set();
const ZERO: NodeAllocatedUsage = { cpu: 0, memory: 0, disk: 0, ports: NO_PORTS };

/**
 * Incrementally maintained usage of every node. Entries are copied on their first change after
 * a snapshot began, so a snapshot reads the usage as of its index (nodeAllocatedUsage) while
 * the plan applier reads the latest.
 */
export class NodeUsageTable {
  private readonly table: CowTable<string, StoredUsage>;

  constructor(private readonly clock: EpochClock) {
    this.table = new CowTable('node_usage', clock);
  }

  /** The latest usage of a node (zero when it holds nothing). Do not mutate. */
  get(nodeId: string): NodeUsageEntry {
    return this.table.get(nodeId)?.usage ?? { totals: { cpu: 0, memoryMB: 0, diskMB: 0 }, ports: new Map() };
  }

  /** The usage of a node as of epoch e, in the scheduler's shape. Do not mutate. */
  getAt(e: Epoch, nodeId: string): NodeAllocatedUsage {
    const s = this.table.getAt(e, nodeId);
    if (!s) return ZERO;
    if (!s.view) {
      const { totals, ports } = s.usage;
      s.view = { cpu: totals.cpu, memory: totals.memoryMB, disk: totals.diskMB, ports: ports.size > 0 ? new Set(ports.keys()) : NO_PORTS };
    }
    return s.view;
  }

  /** The usage of a node as of epoch e, in the plan applier's shape (port holder counts). Do not mutate. */
  entryAt(e: Epoch, nodeId: string): NodeUsageEntry {
    return this.table.getAt(e, nodeId)?.usage ?? { totals: { cpu: 0, memoryMB: 0, diskMB: 0 }, ports: new Map() };
  }

  /**
   * Whether the node's usage changed since epoch e began. Exact in one direction: every change
   * after e stores a new entry (writable() copies what a snapshot may still read), so an
   * unchanged entry means unchanged usage.
   */
  changedSince(e: Epoch, nodeId: string): boolean {
    return this.table.getAt(e, nodeId) !== this.table.get(nodeId);
  }

  /** Accounts for an allocation change; terminal allocations hold nothing. */
  update(prev: Allocation | undefined, next: Allocation | undefined, isTerminal: (a: Allocation) => boolean): void {
    if (prev && !isTerminal(prev)) this.apply(prev, -1);
    if (next && !isTerminal(next)) this.apply(next, 1);
  }

  clear(): void {
    this.table.clearForRestore();
  }

  private writable(nodeId: string): StoredUsage {
    const cur = this.table.get(nodeId);
    const seq = this.clock.current();
    // Mutate in place only when nothing can still see the current object: no snapshot and no
    // undo journal began since it was copied.
    if (cur && (cur.epoch === seq || (!this.clock.live() && !this.clock.journal()))) {
      cur.epoch = seq;
      cur.view = null;
      return cur;
    }
    const usage: NodeUsageEntry = cur
      ? { totals: { ...cur.usage.totals }, ports: new Map(cur.usage.ports) }
      : { totals: { cpu: 0, memoryMB: 0, diskMB: 0 }, ports: new Map() };
    const next: StoredUsage = { epoch: seq, usage, view: null };
    this.table.set(nodeId, next);
    return next;
  }

  private apply(a: Allocation, sign: 1 | -1): void {
    const e = this.writable(a.NodeID).usage;
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
