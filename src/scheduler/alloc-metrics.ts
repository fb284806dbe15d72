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

/**
 * Counts of nodes filtered (or, for an "exhausted" tally, without room) for one selection, by
 * (reason, node class) key id, added to the metric once at the end: a selection may pass over
 * thousands of nodes with the same few reasons, and one integer increment each is all the walk
 * should cost.
 */
export class FilterTally {
  constructor(private readonly kind: 'filtered' | 'exhausted' = 'filtered') {}

  private readonly keys: { reason: string; nodeClass: string }[] = [];
  private readonly ids = new Map<string, number>();
  private counts: number[] = [];
  private readonly touched: number[] = [];

  /** The id of a (reason, node class) pair; stable for the tally's life. */
  idFor(reason: string, nodeClass: string): number {
    const k = `${reason}\u0000${nodeClass}`;
    let id = this.ids.get(k);
    if (id === undefined) {
      id = this.keys.length;
      this.keys.push({ reason, nodeClass });
      this.ids.set(k, id);
      this.counts.push(0);
    }
    return id;
  }

  add(id: number): void {
    if (this.counts[id]++ === 0) this.touched.push(id);
  }

  addMany(id: number, n: number): void {
    if (this.counts[id] === 0) this.touched.push(id);
    this.counts[id]! += n;
  }

  /** Adds the counts to the metric as recordFiltered (recordExhausted) would have, and resets. */
  flushInto(m: AllocMetric): void {
    const filtered = this.kind === 'filtered';
    for (const id of this.touched) {
      const n = this.counts[id]!;
      const { reason, nodeClass } = this.keys[id]!;
      if (filtered) m.NodesFiltered += n;
      else m.NodesExhausted += n;
      const byReason = filtered ? (m.ConstraintFiltered ??= {}) : (m.DimensionExhausted ??= {});
      byReason[reason] = (byReason[reason] ?? 0) + n;
      if (nodeClass) {
        const byClass = filtered ? (m.ClassFiltered ??= {}) : (m.ClassExhausted ??= {});
        byClass[nodeClass] = (byClass[nodeClass] ?? 0) + n;
      }
      this.counts[id] = 0;
    }
    this.touched.length = 0;
  }
}
