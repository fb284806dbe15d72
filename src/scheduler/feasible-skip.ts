/**
 * Jumps over statically infeasible candidates. Once a group's static answer is known for every
 * candidate position, the walk can go straight to the next feasible position and account for
 * the positions it passed as a count per filter reason (prefix sums), instead of visiting each:
 * the metric comes out the same as a node-by-node walk, at a cost independent of how many
 * nodes a constraint excludes.
 */
import type { FilterTally } from './alloc-metrics.js';

/** Past this many distinct filter reasons in one group, the prefix sums cost more than they save. */
export const MAX_SKIP_REASONS = 8;

export class FeasibleSkip {
  /** The first feasible position at or after each position, wrapping around; -1 when none. */
  readonly next: Int32Array;
  private readonly ids: number[];
  /** prefix[k][i]: positions before i filtered with reason ids[k]. */
  private readonly prefix: Int32Array[];

  /** `answers[i]` is FEASIBLE (-1) or the FilterTally id of position i's reason. */
  constructor(answers: Int32Array, feasible: number, ids: number[]) {
    const n = answers.length;
    this.ids = ids;
    this.prefix = ids.map(() => new Int32Array(n + 1));
    const slot = new Map(ids.map((id, k) => [id, k]));
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < ids.length; k++) this.prefix[k]![i + 1] = this.prefix[k]![i]!;
      const a = answers[i]!;
      if (a !== feasible) this.prefix[slot.get(a)!]![i + 1]!++;
    }
    this.next = new Int32Array(n).fill(-1);
    let nextFeasible = -1;
    // Two passes from the end: the second carries the first feasible position around the wrap.
    for (let pass = 0; pass < 2; pass++) {
      for (let i = n - 1; i >= 0; i--) {
        if (answers[i] === feasible) nextFeasible = i;
        this.next[i] = nextFeasible;
      }
    }
  }

  /** Adds to the tally the filter reasons of `count` positions starting at `start`, wrapping. */
  /** `idMap` turns the ids the table was built with into the tally's (shared tables). */
  tallyRange(tally: FilterTally, start: number, count: number, idMap?: (id: number) => number): void {
    const n = this.next.length;
    const end = start + count;
    for (let k = 0; k < this.ids.length; k++) {
      const p = this.prefix[k]!;
      const c = end <= n ? p[end]! - p[start]! : p[n]! - p[start]! + p[end - n]!;
      if (c > 0) tally.addMany(idMap ? idMap(this.ids[k]!) : this.ids[k]!, c);
    }
  }
}
