/**
 * Checks of one plan of the Nomad-workload benchmark: how many allocations it placed against
 * what the cluster can hold, that none landed on a rack the constraint excludes, that no node
 * is over its capacity, and — with a spread — how evenly the racks were filled.
 */
import type { Node, Plan } from '../../src/structs/index.js';
import { nodeCapacity } from '../../src/scheduler/node-usage.js';
import { GROUP_DISK_MB, TASK_CPU_MHZ, TASK_MEMORY_MB } from './nomad-workload.js';

export interface PlanCheck {
  placed: number;
  /** What should have been placed: the count, or the cluster's room for the job if smaller. */
  expected: number;
  onIneligibleRack: number;
  nodesOverCapacity: number;
  /**
   * Spread evenness: the most allocations on one rack minus the fewest on a rack that still
   * had room (0 when every rack is full). A perfect spread has 0 or 1.
   */
  rackImbalance: number;
  /** Human-readable problems; empty when the plan is right. */
  problems: string[];
}

/** How many allocations of the benchmark's group fit on an empty node. */
export function fitsOnNode(node: Node): number {
  const cap = nodeCapacity(node);
  return Math.max(0, Math.min(Math.floor(cap.cpu / TASK_CPU_MHZ), Math.floor(cap.memory / TASK_MEMORY_MB), Math.floor(cap.disk / GROUP_DISK_MB)));
}

/** Checks a plan made on an empty cluster. `maxImbalance` is what the spread may deviate. */
export function checkPlan(plan: Plan, nodes: readonly Node[], eligible: readonly string[], count: number, withSpread: boolean, maxImbalance: number): PlanCheck {
  const ok = new Set(eligible);
  const byId = new Map(nodes.map((n) => [n.ID, n]));
  let room = 0;
  const rackRoom = new Map<string, number>();
  for (const n of nodes) {
    const rack = n.Meta.rack!;
    if (!ok.has(rack)) continue;
    const fits = fitsOnNode(n);
    room += fits;
    rackRoom.set(rack, (rackRoom.get(rack) ?? 0) + fits);
  }
  const expected = Math.min(count, room);
  const perRack = new Map<string, number>(eligible.map((r) => [r, 0]));
  let placed = 0;
  let onIneligibleRack = 0;
  let nodesOverCapacity = 0;
  for (const [nodeId, allocs] of Object.entries(plan.NodeAllocation)) {
    const node = byId.get(nodeId);
    if (!node) throw new Error(`plan places on unknown node ${nodeId}`);
    placed += allocs.length;
    const rack = node.Meta.rack!;
    if (!ok.has(rack)) onIneligibleRack += allocs.length;
    perRack.set(rack, (perRack.get(rack) ?? 0) + allocs.length);
    const cap = nodeCapacity(node);
    let cpu = 0;
    let mem = 0;
    let disk = 0;
    for (const a of allocs) {
      for (const t of Object.values(a.AllocatedResources?.Tasks ?? {})) {
        cpu += t.Cpu.CpuShares;
        mem += t.Memory.MemoryMB;
      }
      disk += a.AllocatedResources?.Shared.DiskMB ?? 0;
    }
    if (cpu > cap.cpu || mem > cap.memory || disk > cap.disk) nodesOverCapacity++;
  }
  let minWithRoom = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const [rack, n] of perRack) {
    max = Math.max(max, n);
    if (n < (rackRoom.get(rack) ?? 0)) minWithRoom = Math.min(minWithRoom, n);
  }
  const rackImbalance = Number.isFinite(minWithRoom) ? max - minWithRoom : 0;
  const problems: string[] = [];
  if (placed !== expected) problems.push(`placed ${placed}, expected ${expected}`);
  if (onIneligibleRack > 0) problems.push(`${onIneligibleRack} on ineligible racks`);
  if (nodesOverCapacity > 0) problems.push(`${nodesOverCapacity} nodes over capacity`);
  if (withSpread && rackImbalance > maxImbalance) problems.push(`rack imbalance ${rackImbalance} > ${maxImbalance}`);
  return { placed, expected, onIneligibleRack, nodesOverCapacity, rackImbalance, problems };
}
