/** Builders for AllocMetric, the explanation of one placement attempt. */
import type { AllocMetric } from '../structs/index.js';

/** A zeroed metric. */
export function newAllocMetric(): AllocMetric {
  return {
    NodesEvaluated: 0,
    NodesFiltered: 0,
    NodesInPool: 0,
    NodesAvailable: {},
    ClassFiltered: null,
    ConstraintFiltered: null,
    NodesExhausted: 0,
    ClassExhausted: null,
    DimensionExhausted: null,
    QuotaExhausted: null,
    ResourcesExhausted: null,
    Scores: null,
    ScoreMetaData: null,
    AllocationTime: 0,
    CoalescedFailures: 0,
  };
}

function bump(rec: Record<string, number> | null, key: string): Record<string, number> {
  const r = rec ?? {};
  r[key] = (r[key] ?? 0) + 1;
  return r;
}

/** Records a node filtered out by a constraint or driver check. */
export function recordFiltered(m: AllocMetric, nodeClass: string, reason: string): void {
  m.NodesFiltered++;
  m.ConstraintFiltered = bump(m.ConstraintFiltered, reason);
  if (nodeClass) m.ClassFiltered = bump(m.ClassFiltered, nodeClass);
}

/** Records a feasible node without room for the placement, by exhausted dimension. */
export function recordExhausted(m: AllocMetric, nodeClass: string, dimension: string): void {
  m.NodesExhausted++;
  m.DimensionExhausted = bump(m.DimensionExhausted, dimension);
  if (nodeClass) m.ClassExhausted = bump(m.ClassExhausted, nodeClass);
}
