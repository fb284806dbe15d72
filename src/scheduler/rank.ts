/**
 * Scores for ranking feasible nodes, each in [-1, 1]; a node's final score is the mean of the
 * scores that apply to it, as Nomad normalises them.
 */
import type { Affinity, Node } from '../structs/index.js';
import { nodeMeetsConstraint } from './constraint-check.js';

/** Nomad's best possible bin-packing fit before normalisation. */
export const BINPACK_MAX_FIT = 18;

/**
 * Bin-packing score: prefers nodes the placement fills most. With the free fraction of CPU and
 * memory after placing, fit = 20 - (10^freeCpu + 10^freeMem), clamped to [0, 18], over 18.
 */
export function binPackScore(capCpu: number, capMem: number, usedCpu: number, usedMem: number): number {
  const freeCpu = capCpu > 0 ? 1 - usedCpu / capCpu : 0;
  const freeMem = capMem > 0 ? 1 - usedMem / capMem : 0;
  const total = Math.pow(10, freeCpu) + Math.pow(10, freeMem);
  const fit = Math.min(BINPACK_MAX_FIT, Math.max(0, 20 - total));
  return fit / BINPACK_MAX_FIT;
}

/**
 * Spread-algorithm score: prefers nodes the placement leaves emptiest, Nomad's inverse of the
 * bin-packing fit: (10^freeCpu + 10^freeMem) - 2, clamped to [0, 18], over 18.
 */
export function spreadFitScore(capCpu: number, capMem: number, usedCpu: number, usedMem: number): number {
  const freeCpu = capCpu > 0 ? 1 - usedCpu / capCpu : 0;
  const freeMem = capMem > 0 ? 1 - usedMem / capMem : 0;
  const fit = Math.min(BINPACK_MAX_FIT, Math.max(0, Math.pow(10, freeCpu) + Math.pow(10, freeMem) - 2));
  return fit / BINPACK_MAX_FIT;
}

/** Penalty for co-locating allocations of the same job and group: -(collisions+1)/count. */
export function antiAffinityScore(collisions: number, desiredCount: number): number | null {
  if (collisions <= 0) return null;
  return -(collisions + 1) / Math.max(1, desiredCount);
}

/** Sum of the weights of matching affinities over the sum of absolute weights; null when none match. */
export function affinityScore(affinities: readonly Affinity[], node: Node): number | null {
  if (affinities.length === 0) return null;
  let sumWeight = 0;
  let total = 0;
  for (const a of affinities) {
    sumWeight += Math.abs(a.Weight);
    if (nodeMeetsConstraint({ LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand }, node)) total += a.Weight;
  }
  if (total === 0 || sumWeight === 0) return null;
  return total / sumWeight;
}

/** The fewest and most allocations on any value of a spread attribute (min is +Infinity when none). */
export interface SpreadStats {
  min: number;
  max: number;
}

/** Min and max over the counts, computed once per selection rather than per candidate. */
export function spreadStats(counts: ReadonlyMap<string, number>): SpreadStats {
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const c of counts.values()) {
    if (c < min) min = c;
    if (c > max) max = c;
  }
  return { min, max };
}

/** Spread boost of one attribute: positive when the node's value is below its share. */
export function spreadBoost(
  counts: ReadonlyMap<string, number>,
  value: string | undefined,
  targets: readonly { Value: string; Percent: number }[] | null,
  desiredCount: number,
): number {
  return spreadBoostWith(counts, spreadStats(counts), value, targets, desiredCount);
}

/** spreadBoost with the counts' min and max given (see spreadStats). */
export function spreadBoostWith(
  counts: ReadonlyMap<string, number>,
  stats: SpreadStats,
  value: string | undefined,
  targets: readonly { Value: string; Percent: number }[] | null,
  desiredCount: number,
): number {
  if (value === undefined) return -1;
  const current = counts.get(value) ?? 0;
  if (targets && targets.length > 0) {
    let percent = targets.find((t) => t.Value === value)?.Percent;
    if (percent === undefined) {
      // Values not named share what the targets leave over.
      const named = targets.reduce((s, t) => s + t.Percent, 0);
      percent = Math.max(0, 100 - named);
    }
    const desired = (percent / 100) * desiredCount;
    if (desired <= 0) return -1;
    return Math.max(-1, Math.min(1, (desired - current) / desired));
  }
  // Even spread: favour the least used values, penalise the most used.
  const max = stats.max;
  const min = counts.has(value) ? stats.min : 0;
  if (max === 0 || min === Number.POSITIVE_INFINITY) return 0;
  if (current === min) return max === min ? 0 : (max - current) / max;
  return -(current - min) / Math.max(1, current);
}
