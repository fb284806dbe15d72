/**
 * What the placement stack derives from the nodes alone, kept across evaluations for as long
 * as the nodes table does not change: the ready nodes in a job's scope in a shuffled order, the
 * count per datacenter, each candidate's capacity, and each group shape's static answers (per
 * computed class) by candidate position, with its skip table.
 *
 * Without it every evaluation passed over the whole cluster before placing anything (list,
 * filter, shuffle, count, then per-candidate class and capacity lookups): at 10,000 nodes that
 * pass cost more than placing 50 allocations. With it an evaluation starts at a random position
 * of the shared shuffled order (each evaluation still samples a different stretch of nodes),
 * and pays for the nodes only when the nodes table moves on.
 *
 * The cache is keyed by the state's nodes-table version (SchedulerState.nodesVersion): its
 * owner (the store's table, held weakly) and its index, which changes with every node write.
 */
import type { Job, Node } from '../structs/index.js';
import type { SchedulerState } from './interfaces.js';
import { nodeInJobScope, nodeIsReady } from './feasibility.js';
import type { FeasibleSkip } from './feasible-skip.js';
import { newSpreadValueIds, type SpreadValueIds } from './spread-score.js';

/** Answers of one group shape (its static checks) by candidate position. */
export interface SharedStaticAnswers {
  /** UNKNOWN_ANSWER, FEASIBLE_ANSWER or an index into `reasons`. */
  readonly answers: Int32Array;
  /** The distinct (reason, node class) pairs the answers name. */
  readonly reasons: { reason: string; nodeClass: string }[];
  /** Index of each pair in `reasons`, by `${reason}\0${nodeClass}`. */
  readonly reasonIds: Map<string, number>;
  /** Answers by computed class, when no constraint escapes the class. */
  readonly byClass: Map<number, number>;
  /** Built once every position is answered (see placement-stack.ts); null: not worth it. */
  skip: FeasibleSkip | null | undefined;
}

export const UNKNOWN_ANSWER = -2;
export const FEASIBLE_ANSWER = -1;

/** The shared, read-mostly candidate data of one job scope at one nodes-table version. */
export class CandidateSet {
  /** Schedulable capacity by position; NaN until loaded. */
  readonly capCpu: Float64Array;
  readonly capMemory: Float64Array;
  readonly capDisk: Float64Array;
  private readonly statics = new Map<string, SharedStaticAnswers>();
  private readonly spreadIds = new Map<string, SpreadValueIds>();
  private positions: Map<string, number> | null = null;

  constructor(
    /** The candidates in their shuffled order; never mutated. */
    readonly nodes: readonly Node[],
    readonly nodesAvailable: Readonly<Record<string, number>>,
  ) {
    const n = nodes.length;
    this.capCpu = new Float64Array(n).fill(Number.NaN);
    this.capMemory = new Float64Array(n);
    this.capDisk = new Float64Array(n);
  }

  /** The static answers of a group shape (see groupShapeKey), created empty on first use. */
  staticAnswers(shape: string): SharedStaticAnswers {
    let s = this.statics.get(shape);
    if (!s) {
      s = { answers: new Int32Array(this.nodes.length).fill(UNKNOWN_ANSWER), reasons: [], reasonIds: new Map(), byClass: new Map(), skip: undefined };
      this.statics.set(shape, s);
    }
    return s;
  }

  /** The shared numbering of a spread attribute's values by position (spread-score.ts). */
  spreadValueIds(attribute: string): SpreadValueIds {
    let ids = this.spreadIds.get(attribute);
    if (!ids) {
      ids = newSpreadValueIds(this.nodes.length);
      this.spreadIds.set(attribute, ids);
    }
    return ids;
  }

  /** The position of a node, or -1. */
  positionOf(nodeId: string): number {
    if (!this.positions) {
      this.positions = new Map();
      this.nodes.forEach((n, i) => this.positions!.set(n.ID, i));
    }
    return this.positions.get(nodeId) ?? -1;
  }
}

/** Shuffles in place with the given random source (Fisher-Yates). */
export function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = items[i]!;
    items[i] = items[j]!;
    items[j] = t;
  }
  return items;
}

/** Draws from `random` what shuffle() draws for `n` items, without the items. */
export function advanceAsShuffle(n: number, random: () => number): void {
  for (let i = n - 1; i > 0; i--) random();
}

/** The scope a job's candidates depend on: datacenters and node pool. */
function scopeKey(job: Job): string {
  return `${job.NodePool || 'default'}\u0000${(job.Datacenters ?? []).join('\u0001')}`;
}

interface VersionEntry {
  index: number;
  sets: Map<string, CandidateSet>;
}

const byOwner = new WeakMap<object, VersionEntry>();
/** Scopes kept per nodes-table version before starting over (jobs with odd scopes pile up). */
const MAX_SCOPES = 64;

/** The ready nodes in the job's scope, in any order (the uncached path lists these itself). */
export function scopedCandidates(state: SchedulerState, job: Job): Node[] {
  const out: Node[] = [];
  for (const n of state.nodes()) if (nodeIsReady(n) && nodeInJobScope(job, n)) out.push(n);
  return out;
}

/**
 * The shared candidate set of the job's scope at the state's nodes-table version, built (and
 * shuffled with `random`) on first use; null when the state has no version to key it by.
 */
export function candidateSetFor(state: SchedulerState, job: Job, random: () => number): CandidateSet | null {
  const v = state.nodesVersion?.();
  if (!v) return null;
  let entry = byOwner.get(v.owner);
  if (!entry || entry.index !== v.index) {
    entry = { index: v.index, sets: new Map() };
    byOwner.set(v.owner, entry);
  }
  const key = scopeKey(job);
  let set = entry.sets.get(key);
  if (!set) {
    const nodes = shuffle(scopedCandidates(state, job), random);
    const available: Record<string, number> = {};
    for (const n of nodes) available[n.Datacenter] = (available[n.Datacenter] ?? 0) + 1;
    set = new CandidateSet(nodes, available);
    if (entry.sets.size >= MAX_SCOPES) entry.sets.clear();
    entry.sets.set(key, set);
  }
  return set;
}
