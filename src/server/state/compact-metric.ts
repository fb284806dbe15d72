/**
 * The placement metric (AllocMetric) as the state store keeps it: compact, with the full Nomad
 * shape materialized when it is read or serialized.
 *
 * Every allocation carries the explanation of its placement. As the scheduler builds it, it
 * is half a dozen objects (the metric, the datacenter counts, the filter tallies, the score
 * list, its entry and its scores) — about 500 bytes per allocation, the largest part of a
 * million-allocation state. Most of it is the same for every allocation of a plan (the
 * datacenter counts, the filter tallies, which nodes ran out of what); what varies is a few
 * counts, the node chosen and its score. A CompactAllocMetric keeps those, plus one shared
 * MetricBase, and answers every AllocMetric field through a getter; JSON.stringify (the HTTP
 * API, log payloads, snapshots) writes the plain shape through toJSON.
 */
import type { AllocMetric, Resources } from '../../structs/index.js';

type ScoreMeta = NonNullable<AllocMetric['ScoreMetaData']>[number];

/** The fields of a metric that allocations of one plan usually share. */
interface MetricBase {
  readonly NodesAvailable: Record<string, number>;
  readonly NodesInPool: number;
  readonly ClassFiltered: Record<string, number> | null;
  readonly ConstraintFiltered: Record<string, number> | null;
  readonly ClassExhausted: Record<string, number> | null;
  readonly DimensionExhausted: Record<string, number> | null;
  readonly QuotaExhausted: string[] | null;
  readonly ResourcesExhausted: Record<string, Resources> | null;
  readonly Scores: Record<string, number> | null;
  readonly CoalescedFailures: number;
}

/** An AllocMetric held compactly (see the file comment); immutable. */
export class CompactAllocMetric implements AllocMetric {
  constructor(
    private readonly base: MetricBase,
    readonly NodesEvaluated: number,
    readonly NodesFiltered: number,
    readonly NodesExhausted: number,
    readonly AllocationTime: number,
    /** The chosen node when the score list is the usual single normalized entry, else the list. */
    private readonly top: string | ScoreMeta[] | null,
    private readonly topScore: number,
  ) {}

  get NodesAvailable(): Record<string, number> {
    return this.base.NodesAvailable;
  }
  get NodesInPool(): number {
    return this.base.NodesInPool;
  }
  get ClassFiltered(): Record<string, number> | null {
    return this.base.ClassFiltered;
  }
  get ConstraintFiltered(): Record<string, number> | null {
    return this.base.ConstraintFiltered;
  }
  get ClassExhausted(): Record<string, number> | null {
    return this.base.ClassExhausted;
  }
  get DimensionExhausted(): Record<string, number> | null {
    return this.base.DimensionExhausted;
  }
  get QuotaExhausted(): string[] | null {
    return this.base.QuotaExhausted;
  }
  get ResourcesExhausted(): Record<string, Resources> | null {
    return this.base.ResourcesExhausted;
  }
  get Scores(): Record<string, number> | null {
    return this.base.Scores;
  }
  get CoalescedFailures(): number {
    return this.base.CoalescedFailures;
  }
  get ScoreMetaData(): ScoreMeta[] | null {
    if (typeof this.top !== 'string') return this.top;
    return [{ NodeID: this.top, Scores: { normalized: this.topScore }, NormScore: this.topScore }];
  }

  /** The score when the score list is the single normalized entry of node `nodeId`; else null. */
  topScoreOn(nodeId: string): number | null {
    return this.top === nodeId ? this.topScore : null;
  }

  /** The plain AllocMetric, in Nomad's field order. */
  toJSON(): AllocMetric {
    return plainMetric(this);
  }
}

/**
 * The score of a metric whose score list is the scheduler's single normalized entry for node
 * `nodeId` (snapshots write just that number); null for any other metric.
 */
export function singleTopScore(m: AllocMetric, nodeId: string): number | null {
  if (m instanceof CompactAllocMetric) return m.topScoreOn(nodeId);
  const e = m.ScoreMetaData?.length === 1 ? m.ScoreMetaData[0]! : undefined;
  return e && e.NodeID === nodeId && isSingleNormalized(e) ? e.NormScore : null;
}

/** A plain-object copy of any AllocMetric (compact or not); without its score list when `scores` is false. */
export function plainMetric(m: AllocMetric, scores = true): AllocMetric {
  return {
    NodesEvaluated: m.NodesEvaluated,
    NodesFiltered: m.NodesFiltered,
    NodesInPool: m.NodesInPool,
    NodesAvailable: m.NodesAvailable,
    ClassFiltered: m.ClassFiltered,
    ConstraintFiltered: m.ConstraintFiltered,
    NodesExhausted: m.NodesExhausted,
    ClassExhausted: m.ClassExhausted,
    DimensionExhausted: m.DimensionExhausted,
    QuotaExhausted: m.QuotaExhausted,
    ResourcesExhausted: m.ResourcesExhausted,
    Scores: m.Scores,
    ScoreMetaData: scores ? m.ScoreMetaData : null,
    AllocationTime: m.AllocationTime,
    CoalescedFailures: m.CoalescedFailures,
  };
}

/**
 * Turns metrics into compact ones, sharing one MetricBase between consecutive metrics whose
 * shared fields are equal (plans are applied allocation after allocation, so consecutive ones
 * are mostly of the same plan).
 */
export class MetricCompactor {
  private last: MetricBase | null = null;

  /**
   * The compact form of `m`; `nodeId` is the allocation's node ID string (the score entry
   * shares it instead of keeping its own copy). A compact metric is returned as it is.
   */
  compact(m: AllocMetric | null, nodeId: string): AllocMetric | null {
    if (m === null || m instanceof CompactAllocMetric) return m;
    const base = this.baseOf(m);
    const sm = m.ScoreMetaData;
    let top: string | ScoreMeta[] | null = sm;
    let topScore = 0;
    const e = sm?.length === 1 ? sm[0]! : undefined;
    if (e && isSingleNormalized(e)) {
      top = e.NodeID === nodeId ? nodeId : e.NodeID;
      topScore = e.NormScore;
    }
    return new CompactAllocMetric(base, m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted, m.AllocationTime, top, topScore);
  }

  /** The compact form of `m` (whose score list is ignored) with the single normalized entry (nodeId, score). */
  compactWithTop(m: AllocMetric, nodeId: string, score: number): CompactAllocMetric {
    return new CompactAllocMetric(this.baseOf(m), m.NodesEvaluated, m.NodesFiltered, m.NodesExhausted, m.AllocationTime, nodeId, score);
  }

  private baseOf(m: AllocMetric): MetricBase {
    const l = this.last;
    if (
      l !== null &&
      l.NodesInPool === m.NodesInPool &&
      l.CoalescedFailures === m.CoalescedFailures &&
      sameRecord(l.NodesAvailable, m.NodesAvailable) &&
      sameRecord(l.ClassFiltered, m.ClassFiltered) &&
      sameRecord(l.ConstraintFiltered, m.ConstraintFiltered) &&
      sameRecord(l.ClassExhausted, m.ClassExhausted) &&
      sameRecord(l.DimensionExhausted, m.DimensionExhausted) &&
      sameRecord(l.Scores, m.Scores) &&
      l.QuotaExhausted === m.QuotaExhausted &&
      l.ResourcesExhausted === m.ResourcesExhausted
    ) {
      return l;
    }
    this.last = {
      NodesAvailable: m.NodesAvailable,
      NodesInPool: m.NodesInPool,
      ClassFiltered: m.ClassFiltered,
      ConstraintFiltered: m.ConstraintFiltered,
      ClassExhausted: m.ClassExhausted,
      DimensionExhausted: m.DimensionExhausted,
      QuotaExhausted: m.QuotaExhausted,
      ResourcesExhausted: m.ResourcesExhausted,
      Scores: m.Scores,
      CoalescedFailures: m.CoalescedFailures,
    };
    return this.last;
  }
}

/** True for the entry the scheduler writes: {NodeID, Scores: {normalized: s}, NormScore: s}. */
function isSingleNormalized(e: ScoreMeta): boolean {
  if (typeof e.NodeID !== 'string' || typeof e.NormScore !== 'number' || e.Scores === null || typeof e.Scores !== 'object') return false;
  let keys = 0;
  for (const k in e) if (Object.hasOwn(e, k)) keys++;
  if (keys !== 3) return false;
  let scoreKeys = 0;
  for (const k in e.Scores) if (Object.hasOwn(e.Scores, k)) scoreKeys++;
  return scoreKeys === 1 && Object.is(e.Scores.normalized, e.NormScore);
}

/** Same keys with the same number values (or the same object, or both null). */
function sameRecord(a: Record<string, number> | null, b: Record<string, number> | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  let n = 0;
  for (const k in a) {
    if (!Object.hasOwn(a, k)) continue;
    if (a[k] !== b[k]) return false;
    n++;
  }
  for (const k in b) if (Object.hasOwn(b, k)) n--;
  return n === 0;
}
