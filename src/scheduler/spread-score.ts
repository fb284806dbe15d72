/**
 * Spread scoring of one task group during one evaluation. The counts of allocations per
 * attribute value are kept up to date as the plan grows (the placement stack adds each
 * placement and removes each stop), so a selection never recounts them; within one selection
 * the counts do not change, so each value's boost is computed once and shared by every
 * candidate with that value. Values are numbered, and each candidate's value numbers are
 * cached by its position, so scoring a candidate is a few array reads.
 */
import type { Node, Spread } from '../structs/index.js';
import { targetResolver, type TargetResolver } from './constraint-check.js';
import { spreadBoostWith, spreadStats, type SpreadStats } from './rank.js';

/** Value number of a node without the attribute. */
const MISSING = -1;
/** Position not looked at yet. */
const UNKNOWN = -2;
/** The boost of a node without the attribute. */
const MISSING_BOOST = -1;

interface OneSpread {
  spread: Spread;
  resolve: TargetResolver;
  /** Its share of the group's spread weight. */
  weight: number;
  counts: ReadonlyMap<string, number>;
  stats: SpreadStats;
  ids: Map<string, number>;
  values: string[];
  /** Value number by candidate position (UNKNOWN: not looked at yet). */
  byPos: Int32Array;
  /** Boost by value number, valid when stamps[id] is the current selection. */
  boosts: number[];
  stamps: number[];
}

/**
 * The numbering of one attribute's values and each candidate position's value number; it
 * depends on the nodes only, so the placement stack may share one across evaluations
 * (candidate-set.ts). Numbers are only ever added.
 */
export interface SpreadValueIds {
  readonly ids: Map<string, number>;
  readonly values: string[];
  readonly byPos: Int32Array;
}

/** An empty numbering for `positions` candidate positions. */
export function newSpreadValueIds(positions: number): SpreadValueIds {
  return { ids: new Map(), values: [], byPos: new Int32Array(positions).fill(UNKNOWN) };
}

export class SpreadScorer {
  private readonly spreads: OneSpread[];
  private stamp = 0;

  /**
   * `counts[i]` are the live counts of spreads[i]'s attribute, owned and updated by the caller;
   * `positions` is the number of candidate positions; `valueIds(attribute)`, when given, is a
   * shared numbering of the attribute's values for those positions.
   */
  constructor(
    spreads: readonly Spread[],
    counts: readonly ReadonlyMap<string, number>[],
    private readonly desiredCount: number,
    positions: number,
    valueIds?: (attribute: string) => SpreadValueIds,
  ) {
    let weights = 0;
    for (const s of spreads) weights += Math.abs(s.Weight || 0) || 1;
    this.spreads = spreads.map((spread, i) => {
      const numbering = valueIds ? valueIds(spread.Attribute) : newSpreadValueIds(positions);
      return {
        spread,
        resolve: targetResolver(spread.Attribute),
        weight: (Math.abs(spread.Weight || 0) || 1) / weights,
        counts: counts[i]!,
        stats: { min: Number.POSITIVE_INFINITY, max: 0 },
        ids: numbering.ids,
        values: numbering.values,
        byPos: numbering.byPos,
        boosts: [],
        stamps: [],
      };
    });
  }

  /** Starts a selection: takes the counts as they are now. */
  begin(): void {
    this.stamp++;
    for (const s of this.spreads) s.stats = spreadStats(s.counts);
    const one = this.spreads.length === 1 ? this.spreads[0]! : null;
    if (one) {
      // One spread (the usual case): every known value's weighted boost up front, so a
      // candidate costs two array reads (see single()).
      for (let id = 0; id < one.values.length; id++) {
        one.boosts[id] = spreadBoostWith(one.counts, one.stats, one.values[id], one.spread.SpreadTarget, this.desiredCount);
        one.stamps[id] = this.stamp;
      }
      for (let id = 0; id < one.values.length; id++) this.weighted[id] = one.weight * one.boosts[id]!;
    }
  }

  /** Weighted boost by value number, for a single spread, valid for the current selection. */
  private readonly weighted: number[] = [];

  /**
   * The weighted spread score of a candidate position whose value is already numbered, when
   * there is exactly one spread; NaN when the slow path (score()) must answer.
   */
  single(at: number): number {
    if (this.spreads.length !== 1) return Number.NaN;
    const id = this.spreads[0]!.byPos[at]!;
    if (id < 0 || id >= this.weighted.length) return Number.NaN;
    return this.weighted[id]!;
  }

  private idOf(s: OneSpread, node: Node): number {
    const v = s.resolve(node);
    if (v === undefined) return MISSING;
    let id = s.ids.get(v);
    if (id === undefined) {
      id = s.values.length;
      s.ids.set(v, id);
      s.values.push(v);
    }
    return id;
  }

  /** What score() computed last (a number field: the per-candidate call returns no boxed value). */
  result = 0;

  /** The weighted spread score of the node at candidate position `at` (-1: not a candidate), into `result`. */
  score(node: Node, at: number): void {
    let total = 0;
    const k = this.spreads.length;
    for (let i = 0; i < k; i++) {
      const s = this.spreads[i]!;
      let id: number;
      if (at >= 0) {
        id = s.byPos[at]!;
        if (id === UNKNOWN) s.byPos[at] = id = this.idOf(s, node);
      } else id = this.idOf(s, node);
      let boost: number;
      if (id === MISSING) boost = MISSING_BOOST;
      else if (s.stamps[id] === this.stamp) boost = s.boosts[id]!;
      else {
        boost = spreadBoostWith(s.counts, s.stats, s.values[id], s.spread.SpreadTarget, this.desiredCount);
        s.boosts[id] = boost;
        s.stamps[id] = this.stamp;
      }
      total += s.weight * boost;
    }
    this.result = total;
  }
}
