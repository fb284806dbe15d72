/**
 * Capacity and proposed usage of the placement stack's candidates, by candidate position, in
 * flat number arrays: the walk over candidates reads a few array slots per node instead of
 * chasing a usage object and a capacity object per node. ProposedUsage stays the one source of
 * truth; a position is loaded from it on first look and refreshed after every change the stack
 * makes to that node (placements and stops go through the stack).
 */
import type { Node } from '../structs/index.js';
import { nodeCapacity, type ProposedUsage } from './node-usage.js';

/** Capacity arrays by candidate position (NaN cpu: not loaded yet). */
export interface SharedCapacity {
  readonly capCpu: Float64Array;
  readonly capMemory: Float64Array;
  readonly capDisk: Float64Array;
}

export class CandidateUsage {
  /** Schedulable capacity; NaN until the position is loaded. */
  readonly capCpu: Float64Array;
  readonly capMemory: Float64Array;
  readonly capDisk: Float64Array;
  /** Proposed usage, mirrored from ProposedUsage. */
  readonly usedCpu: Float64Array;
  readonly usedMemory: Float64Array;
  readonly usedDisk: Float64Array;
  /** 1 once the position's usage is loaded in this evaluation. */
  private readonly usageLoaded: Uint8Array;

  /**
   * @param shared capacity arrays kept across evaluations (candidate-set.ts): capacity depends on
   *   the node only; a position's usage is still loaded once per evaluation.
   */
  constructor(private readonly usage: ProposedUsage, n: number, shared: SharedCapacity | null = null) {
    this.capCpu = shared ? shared.capCpu : new Float64Array(n).fill(Number.NaN);
    this.capMemory = shared ? shared.capMemory : new Float64Array(n);
    this.capDisk = shared ? shared.capDisk : new Float64Array(n);
    this.usageLoaded = new Uint8Array(n);
    this.usedCpu = new Float64Array(n);
    this.usedMemory = new Float64Array(n);
    this.usedDisk = new Float64Array(n);
  }

  /** True once the position's figures are loaded. */
  loaded(at: number): boolean {
    return this.usageLoaded[at] === 1;
  }

  /** Loads the position's capacity (unless shared and known) and usage from the node and ProposedUsage. */
  load(at: number, node: Node): void {
    if (Number.isNaN(this.capCpu[at]!)) {
      const cap = nodeCapacity(node);
      this.capMemory[at] = cap.memory;
      this.capDisk[at] = cap.disk;
      this.capCpu[at] = cap.cpu;
    }
    const u = this.usage.peek(node.ID);
    this.usageLoaded[at] = 1;
    this.usedCpu[at] = u.cpu;
    this.usedMemory[at] = u.memory;
    this.usedDisk[at] = u.disk;
  }

  /** Re-reads a loaded position after ProposedUsage changed for its node. */
  refresh(at: number, node: Node): void {
    if (!this.loaded(at)) return;
    const u = this.usage.peek(node.ID);
    this.usedCpu[at] = u.cpu;
    this.usedMemory[at] = u.memory;
    this.usedDisk[at] = u.disk;
  }
}
