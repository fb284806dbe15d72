/**
 * The placement stack of one evaluation: walks the job's candidate nodes in a random order,
 * filters them (static checks answered once per computed node class, distinct_* and resources
 * per placement), scores the feasible ones and picks the best of a bounded sample, as Nomad
 * does: ⌈log2 n⌉ candidates (at least 2) for services, 2 for batch, and max(count, 100) when
 * affinities or spreads apply. Placements made are recorded so the next one sees them; the
 * spread counts follow them incrementally (see spread-score.ts).
 *
 * Everything that depends only on the node (static answer, capacity, affinity score, spread
 * attribute values) is cached by the candidate's position for the whole evaluation.
 */
import type { Affinity, AllocMetric, Allocation, Job, Node, Spread, TaskGroup } from '../structs/index.js';
import type { SchedulerState } from './interfaces.js';
import { FilterTally, newAllocMetric, recordExhausted, recordFiltered } from './alloc-metrics.js';
import { constraintString, DistinctOperator, resolveTarget } from './constraint-check.js';
import { ClassFeasibility, distinctConstraints, FilterReason, groupConstraints } from './feasibility.js';
import { hostVolumeRequests, nodeHasHostVolumes, type VolumeRequest } from '../structs/host-volume.js';
import { singleWriterClaimsFree, singleWriterRequests } from './host-volume-claims.js';
import type { HostVolume } from '../structs/dynamic-host-volume.js';
import { groupAsk, type GroupAsk } from '../structs/group-ask.js';
import { isLiveAlloc } from '../structs/alloc.js';
import { computedClass } from './node-class.js';
import { nodeCapacity, ProposedUsage, type ProposedNodeUsage } from './node-usage.js';
import { CandidateUsage } from './candidate-usage.js';
import { FeasibleSkip, MAX_SKIP_REASONS } from './feasible-skip.js';
import { assignPorts, NO_PORTS, type PortAssignment } from './port-assignment.js';
import { affinityScore, antiAffinityScore, binPackScore, spreadFitScore } from './rank.js';
import { SpreadScorer } from './spread-score.js';
import { advanceAsShuffle, CandidateSet, FEASIBLE_ANSWER, UNKNOWN_ANSWER, shuffle, type SharedStaticAnswers } from './candidate-set.js';

/** A chosen node with its score and the ports assigned there. */
export interface Selection {
  node: Node;
  score: number;
  ports: PortAssignment;
  ask: GroupAsk;
  /** The node's candidate position in the stack that chose it (-1: chosen outside the walk). */
  at: number;
}

/** Options of one selection. */
export interface SelectOptions {
  /** Nodes to score down (the node a failed allocation ran on). */
  penaltyNodeIds?: ReadonlySet<string>;
  /** The name of the allocation placed ("job.group[N]"): its index picks per_alloc host volumes. */
  allocName?: string;
}

/** Nomad's floor on the candidates scored when affinities or spreads apply. */
export const MIN_SPREAD_CANDIDATES = 100;

/** Static answers by position: not computed yet, or feasible; otherwise a FilterTally id. */
const UNKNOWN = UNKNOWN_ANSWER;
const FEASIBLE = FEASIBLE_ANSWER;
/** Fit by position on the fast path. */
const FIT_UNKNOWN = 0;
const FITS = 1;
const NO_ROOM = 2;
/** Affinity cache by position: not computed yet (NaN), or no affinity applies. */
const NO_AFFINITY = 2;

interface GroupCache {
  ask: GroupAsk;
  feasibility: ClassFeasibility;
  distinct: ReturnType<typeof distinctConstraints>;
  /** per_alloc host volumes: which node has them depends on the allocation's index (score()). */
  perAllocVolumes: VolumeRequest[];
  /** single-node-single-writer host volumes: their claims depend on the plan (score()). */
  singleWriterVolumes: VolumeRequest[];
  affinities: Affinity[];
  spreads: Spread[];
  spreadScorer: SpreadScorer | null;
  /** Static answers by candidate position (UNKNOWN, FEASIBLE or the filter's tally id). */
  staticByIndex: Int32Array;
  /** Static answers by computed class (when no constraint escapes the class). */
  answerByClass: Map<number, number>;
  /** Static answers by node ID, for nodes looked at outside the walk (system jobs, in-place). */
  staticReason: Map<string, string | null>;
  /** Affinity score by candidate position (NaN: not computed yet; NO_AFFINITY: none applies). */
  affinityByIndex: Float64Array;
  /** Bin-packing score by candidate position, valid while the node's cpu/memory in use are these. */
  binPackCpu: Float64Array;
  binPackMemory: Float64Array;
  binPackScore: Float64Array;
  /** This group's live allocations (in state and proposed) by candidate position, for anti-affinity. */
  mineByIndex: Int32Array;
  /**
   * The fast path (no distinct_* constraint, no ports asked): whether the node has room for one
   * more allocation (FIT_UNKNOWN until looked at, reset whenever the plan changes the node), and
   * if so the sum and number of its scores other than spread; if not, the exhausted tally id.
   */
  fast: boolean;
  fitByIndex: Uint8Array;
  baseByIndex: Float64Array;
  partsByIndex: Uint8Array;
  exhaustedByIndex: Int32Array;
  /** Positions walked for this group; once past the candidate count, the skip table is built. */
  walked: number;
  /** Jumps over infeasible positions; null until built or when not worth it. */
  skip: FeasibleSkip | null;
  /** The group shape's answers shared across evaluations (candidate-set.ts), if any. */
  shared: SharedStaticAnswers | null;
  /** Local tally id of each shared reason index (-1: not registered yet). */
  localIds: number[];
}

/** Counts of job allocations by node attribute value, for spreads and distinct_property. */
interface ValueCounts {
  attribute: string;
  group: string | null;
  counts: Map<string, number>;
}

export { shuffle };

/** The placement stack; one per evaluation attempt. */
export class PlacementStack {
  private cursor = 0;
  private readonly groups = new Map<string, GroupCache>();
  /** Live allocations of this job per node, by group. */
  private readonly jobAllocsOnNode = new Map<string, Map<string, number>>();
  private readonly valueCounts = new Map<string, ValueCounts>();
  private readonly liveJobAllocs: Allocation[];
  private readonly stoppedIds = new Set<string>();
  /** Proposed usage and capacity by candidate position, looked up once per evaluation. */
  private readonly at: CandidateUsage;
  /** Candidate position by node ID; built on first need (stops, existing allocations). */
  private positions: Map<string, number> | null = null;
  private readonly tally = new FilterTally();
  private readonly exhausted = new FilterTally('exhausted');
  /** The last bin-packing score prepare() computed, with what it was computed from. */
  private readonly binPackMemo = { ask: null as GroupAsk | null, capCpu: -1, capMemory: -1, usedCpu: -1, usedMemory: -1, score: 0 };
  /** The score and ports of the last node score() accepted (fields, so scoring allocates nothing). */
  private lastScore = 0;
  private lastPorts: PortAssignment = NO_PORTS;
  readonly nodesAvailable: Record<string, number>;
  /** The ready nodes in scope when the candidates are only some of them (see the constructor's `pool`). */
  private readonly poolSize: number | undefined;
  private readonly fitScore: typeof binPackScore;
  /** Whether placements keep their tasks' `memory_max` (the operator's memory oversubscription). */
  readonly memoryOversubscription: boolean;
  private readonly candidates: readonly Node[];
  /** The candidates shared across evaluations, when the state allows it (candidate-set.ts). */
  private readonly shared: CandidateSet | null;
  /** Dynamic host volumes by ID (their state and capabilities), when the state can look them up. */
  private readonly volumeById: ((id: string) => HostVolume | undefined) | undefined;

  constructor(
    private readonly job: Job,
    /**
     * Ready nodes in the job's datacenters and pool, in any order (shuffled here), or the shared
     * candidate set (already shuffled: the walk starts at a random position).
     */
    candidates: Node[] | CandidateSet,
    readonly usage: ProposedUsage,
    private readonly state: SchedulerState,
    private readonly random: () => number,
    jobAllocs: readonly Allocation[],
    /**
     * Given when `candidates` are only some of the ready nodes (a system job's walk of the nodes
     * a node update can change: settled-walk.ts): the whole pool's count per datacenter and size,
     * for the metrics, and the random source advances as shuffling the whole pool would, so the
     * draws after it (ports) are the full walk's.
     */
    pool?: { nodesAvailable: Record<string, number>; size: number },
  ) {
    // The operator's algorithm, fixed for this evaluation as the state snapshot is.
    this.fitScore = state.schedulerAlgorithm?.() === 'spread' ? spreadFitScore : binPackScore;
    this.memoryOversubscription = state.memoryOversubscription?.() ?? false;
    this.volumeById = state.hostVolumeById?.bind(state);
    if (candidates instanceof CandidateSet) {
      this.shared = candidates;
      this.candidates = candidates.nodes;
      // Shared read-only: every metric of the evaluation refers to the same object anyway.
      this.nodesAvailable = candidates.nodesAvailable as Record<string, number>;
      this.cursor = this.candidates.length > 0 ? Math.floor(random() * this.candidates.length) : 0;
    } else if (pool) {
      this.shared = null;
      this.candidates = candidates;
      advanceAsShuffle(pool.size, random);
      this.nodesAvailable = pool.nodesAvailable;
      this.poolSize = pool.size;
    } else {
      this.shared = null;
      this.candidates = shuffle(candidates, random);
      this.nodesAvailable = {};
      for (const n of candidates) this.nodesAvailable[n.Datacenter] = (this.nodesAvailable[n.Datacenter] ?? 0) + 1;
    }
    this.at = new CandidateUsage(usage, this.candidates.length, this.shared);
    this.liveJobAllocs = jobAllocs.filter(isLiveAlloc);
    for (const a of this.liveJobAllocs) this.bumpNode(a.NodeID, a.TaskGroup, 1);
  }

  private bumpNode(nodeId: string, group: string, by: number): void {
    let m = this.jobAllocsOnNode.get(nodeId);
    if (!m) this.jobAllocsOnNode.set(nodeId, (m = new Map()));
    m.set(group, (m.get(group) ?? 0) + by);
  }

  private groupCache(group: TaskGroup): GroupCache {
    let g = this.groups.get(group.Name);
    if (!g) {
      const affinities = [...(this.job.Affinities ?? []), ...(group.Affinities ?? [])];
      for (const t of group.Tasks) affinities.push(...(t.Affinities ?? []));
      const spreads = [...(this.job.Spreads ?? []), ...(group.Spreads ?? [])];
      const n = this.candidates.length;
      g = {
        ask: groupAsk(group),
        feasibility: new ClassFeasibility(groupConstraints(this.job, group), group, this.job.Namespace, this.volumeById),
        distinct: distinctConstraints(this.job, group),
        perAllocVolumes: [],
        singleWriterVolumes: [],
        affinities,
        spreads,
        spreadScorer:
          spreads.length > 0
            ? new SpreadScorer(spreads, spreads.map((s) => this.counts(s.Attribute, group.Name)), group.Count, n, this.shared ? (a) => this.shared!.spreadValueIds(a) : undefined)
            : null,
        staticByIndex: new Int32Array(n).fill(UNKNOWN),
        answerByClass: new Map(),
        staticReason: new Map(),
        affinityByIndex: new Float64Array(n).fill(Number.NaN),
        binPackCpu: new Float64Array(n).fill(-1),
        binPackMemory: new Float64Array(n).fill(-1),
        binPackScore: new Float64Array(n),
        mineByIndex: this.seedMine(group.Name, n),
        fast: false,
        fitByIndex: new Uint8Array(n),
        baseByIndex: new Float64Array(n),
        partsByIndex: new Uint8Array(n),
        exhaustedByIndex: new Int32Array(n),
        walked: 0,
        skip: null,
        shared: null,
        localIds: [],
      };
      if (this.shared) {
        g.shared = this.shared.staticAnswers(groupShapeKey(this.job, group));
        if (g.shared.skip) g.skip = g.shared.skip;
      }
      g.perAllocVolumes = hostVolumeRequests(group.Volumes).filter((v) => v.PerAlloc);
      g.singleWriterVolumes = singleWriterRequests(hostVolumeRequests(group.Volumes));
      g.fast = g.distinct.length === 0 && g.ask.networks.length === 0 && g.perAllocVolumes.length === 0 && g.singleWriterVolumes.length === 0;
      this.groups.set(group.Name, g);
    }
    return g;
  }

  private positionOf(nodeId: string): number {
    if (this.shared) return this.shared.positionOf(nodeId);
    if (!this.positions) {
      this.positions = new Map();
      this.candidates.forEach((n, i) => this.positions!.set(n.ID, i));
    }
    return this.positions.get(nodeId) ?? -1;
  }

  /** The group's live allocations by candidate position, from those in state. */
  private seedMine(group: string, n: number): Int32Array {
    const mine = new Int32Array(n);
    for (const [nodeId, byGroup] of this.jobAllocsOnNode) {
      const c = byGroup.get(group) ?? 0;
      if (c === 0) continue;
      const at = this.positionOf(nodeId);
      if (at >= 0) mine[at] = c;
    }
    return mine;
  }

  /** How many feasible candidates to compare for a group. */
  private sampleLimit(g: GroupCache, group: TaskGroup): number {
    if (g.affinities.length > 0 || g.spreads.length > 0) return Math.max(group.Count, MIN_SPREAD_CANDIDATES);
    if (this.job.Type === 'batch') return 2;
    const n = this.candidates.length;
    return Math.max(2, n > 0 ? Math.ceil(Math.log2(n)) : 0);
  }

  /** Counts of allocations by the value of `attribute`, scoped to a group or the whole job. */
  private counts(attribute: string, group: string | null): Map<string, number> {
    const key = `${group ?? ''}\u0000${attribute}`;
    let vc = this.valueCounts.get(key);
    if (!vc) {
      vc = { attribute, group, counts: new Map() };
      for (const a of this.liveJobAllocs) {
        if (group !== null && a.TaskGroup !== group) continue;
        if (this.stoppedIds.has(a.ID)) continue;
        const node = this.state.nodeById(a.NodeID);
        const v = node ? resolveTarget(attribute, node) : undefined;
        if (v !== undefined) vc.counts.set(v, (vc.counts.get(v) ?? 0) + 1);
      }
      this.valueCounts.set(key, vc);
    }
    return vc.counts;
  }

  /** Picks a node for one allocation of the group, recording why nodes were passed over. */
  select(group: TaskGroup, opts: SelectOptions = {}): { selection: Selection | null; metric: AllocMetric } {
    const metric = newAllocMetric();
    metric.NodesAvailable = this.nodesAvailable;
    metric.NodesInPool = this.poolSize ?? this.candidates.length;
    const g = this.groupCache(group);
    g.spreadScorer?.begin();
    const limit = this.sampleLimit(g, group);
    const n = this.candidates.length;
    const tally = this.tally;
    const exhausted = this.exhausted;
    const fast = g.fast && !(opts.penaltyNodeIds && opts.penaltyNodeIds.size > 0);
    const scorer = g.spreadScorer;
    let bestAt = -1;
    let bestScore = Number.NEGATIVE_INFINITY;
    let bestPorts: PortAssignment | null = null;
    let found = 0;
    let seen = 0;
    if (g.skip === null && g.walked >= n) g.skip = this.buildSkip(g);
    const skip = g.skip;
    while (seen < n && found < limit) {
      let at = this.cursor;
      if (skip) {
        // Jump to the next feasible position, counting the ones passed as the walk would.
        const next = skip.next[at]!;
        const gap = next < 0 ? n : next >= at ? next - at : next + n - at;
        if (gap > 0) {
          const passed = Math.min(gap, n - seen);
          skip.tallyRange(tally, at, passed, g.shared ? (id) => this.localId(g, id) : undefined);
          seen += passed;
          at = (at + passed) % n;
          this.cursor = at;
          if (seen >= n) break;
        }
      }
      const node = this.candidates[at]!;
      this.cursor = at + 1 === n ? 0 : at + 1;
      seen++;
      let answer = g.staticByIndex[at]!;
      if (answer === UNKNOWN) g.staticByIndex[at] = answer = this.staticAnswer(g, node, at);
      if (answer !== FEASIBLE) {
        tally.add(answer);
        continue;
      }
      let score: number;
      if (fast) {
        // The mean of the scores that apply, from the node's cached non-spread part.
        let fit = g.fitByIndex[at]!;
        if (fit === FIT_UNKNOWN) fit = this.prepare(g, at, node, group);
        if (fit !== FITS) {
          exhausted.add(g.exhaustedByIndex[at]!);
          continue;
        }
        score = g.baseByIndex[at]!;
        let parts = g.partsByIndex[at]!;
        if (scorer) {
          let total = scorer.single(at);
          if (Number.isNaN(total)) {
            scorer.score(node, at);
            total = scorer.result;
          }
          if (total !== 0) { score += total; parts++; }
        }
        score /= parts;
      } else {
        if (!this.score(node, at, group, g, metric, opts)) continue;
        score = this.lastScore;
      }
      found++;
      if (bestAt < 0 || score > bestScore) {
        bestAt = at;
        bestScore = score;
        bestPorts = fast ? NO_PORTS : this.lastPorts;
      }
    }
    g.walked += seen;
    metric.NodesEvaluated += seen;
    tally.flushInto(metric);
    exhausted.flushInto(metric);
    if (bestAt < 0) return { selection: null, metric };
    const node = this.candidates[bestAt]!;
    metric.ScoreMetaData = [{ NodeID: node.ID, Scores: { normalized: bestScore }, NormScore: bestScore }];
    return { selection: { node, score: bestScore, ports: bestPorts!, ask: g.ask, at: bestAt }, metric };
  }

  /** Tries the group on one given node (system jobs). */
  selectOnNode(group: TaskGroup, node: Node): { selection: Selection | null; metric: AllocMetric } {
    const metric = newAllocMetric();
    metric.NodesAvailable = this.nodesAvailable;
    metric.NodesInPool = this.poolSize ?? this.candidates.length;
    const g = this.groupCache(group);
    g.spreadScorer?.begin();
    metric.NodesEvaluated++;
    const reason = this.staticReason(g, node);
    if (reason !== null) {
      recordFiltered(metric, node.NodeClass, reason);
      return { selection: null, metric };
    }
    if (!this.score(node, -1, group, g, metric, {})) return { selection: null, metric };
    return { selection: { node, score: this.lastScore, ports: this.lastPorts, ask: g.ask, at: -1 }, metric };
  }

  /** Completes the group's static answers and builds its skip table, when few reasons apply. */
  private buildSkip(g: GroupCache): FeasibleSkip | null {
    const shared = g.shared;
    if (shared && shared.skip !== undefined) return shared.skip;
    const ids = new Set<number>();
    let skip: FeasibleSkip | null = null;
    for (let i = 0; i < this.candidates.length; i++) {
      let answer = g.staticByIndex[i]!;
      if (answer === UNKNOWN) g.staticByIndex[i] = answer = this.staticAnswer(g, this.candidates[i]!, i);
      if (answer !== FEASIBLE) ids.add(shared ? shared.answers[i]! : answer);
      if (ids.size > MAX_SKIP_REASONS) break;
    }
    // Shared answers are kept with the shared reason indexes; the walk maps them to its tally's.
    if (ids.size <= MAX_SKIP_REASONS) skip = new FeasibleSkip(shared ? shared.answers : g.staticByIndex, FEASIBLE, [...ids]);
    if (shared) shared.skip = skip;
    return skip;
  }

  /** The local tally id of a shared reason index. */
  private localId(g: GroupCache, id: number): number {
    let local = g.localIds[id];
    if (local === undefined || local < 0) {
      const r = g.shared!.reasons[id]!;
      g.localIds[id] = local = this.tally.idFor(r.reason, r.nodeClass);
    }
    return local;
  }

  /**
   * FEASIBLE, or the tally id of the reason the node at `at` is filtered; once per class when
   * possible, and once per nodes-table version when the answers are shared.
   */
  private staticAnswer(g: GroupCache, node: Node, at: number): number {
    const shared = g.shared;
    if (!shared) return this.ownStaticAnswer(g, node);
    let answer = shared.answers[at]!;
    if (answer === UNKNOWN) {
      const perNode = g.feasibility.perNode;
      const cls = perNode ? -1 : computedClass(node);
      const known = perNode ? undefined : shared.byClass.get(cls);
      if (known !== undefined) answer = known;
      else {
        const reason = g.feasibility.reason(node);
        if (reason === null) answer = FEASIBLE;
        else {
          const key = `${reason}\u0000${node.NodeClass}`;
          answer = shared.reasonIds.get(key) ?? -1;
          if (answer < 0) {
            answer = shared.reasons.length;
            shared.reasons.push({ reason, nodeClass: node.NodeClass });
            shared.reasonIds.set(key, answer);
          }
        }
        if (!perNode) shared.byClass.set(cls, answer);
      }
      shared.answers[at] = answer;
    }
    return answer === FEASIBLE ? FEASIBLE : this.localId(g, answer);
  }

  private ownStaticAnswer(g: GroupCache, node: Node): number {
    const perNode = g.feasibility.perNode;
    const cls = perNode ? -1 : computedClass(node);
    if (!perNode) {
      const known = g.answerByClass.get(cls);
      if (known !== undefined) return known;
    }
    const reason = g.feasibility.reason(node);
    const answer = reason === null ? FEASIBLE : this.tally.idFor(reason, node.NodeClass);
    if (!perNode) g.answerByClass.set(cls, answer);
    return answer;
  }

  /** True when the node passes the group's static checks (drivers, constraints). */
  staticallyFeasible(group: TaskGroup, node: Node): boolean {
    return this.staticReason(this.groupCache(group), node) === null;
  }

  private staticReason(g: GroupCache, node: Node): string | null {
    let reason = g.staticReason.get(node.ID);
    if (reason === undefined) {
      reason = g.feasibility.reason(node);
      g.staticReason.set(node.ID, reason);
    }
    return reason;
  }

  /**
   * Fast path: whether the node at `at` has room for the group, and its scores other than spread
   * (bin-packing, job anti-affinity, affinity, summed in score()'s order), cached until the plan
   * changes the node.
   */
  private prepare(g: GroupCache, at: number, node: Node, group: TaskGroup): number {
    const c = this.at;
    if (!c.loaded(at)) c.load(at, node);
    const ask = g.ask;
    const usedCpu = c.usedCpu[at]!;
    const usedMemory = c.usedMemory[at]!;
    const capCpu = c.capCpu[at]!;
    const capMemory = c.capMemory[at]!;
    const dim =
      usedCpu + ask.cpu > capCpu ? 'cpu' : usedMemory + ask.memory > capMemory ? 'memory' : c.usedDisk[at]! + ask.disk > c.capDisk[at]! ? 'disk' : null;
    if (dim) {
      g.exhaustedByIndex[at] = this.exhausted.idFor(dim, node.NodeClass);
      return (g.fitByIndex[at] = NO_ROOM);
    }
    // Nodes of one shape with the same load score the same; most of a cluster is that.
    const memo = this.binPackMemo;
    if (memo.ask !== ask || memo.capCpu !== capCpu || memo.capMemory !== capMemory || memo.usedCpu !== usedCpu || memo.usedMemory !== usedMemory) {
      memo.ask = ask;
      memo.capCpu = capCpu;
      memo.capMemory = capMemory;
      memo.usedCpu = usedCpu;
      memo.usedMemory = usedMemory;
      memo.score = this.fitScore(capCpu, capMemory, usedCpu + ask.cpu, usedMemory + ask.memory);
    }
    let sum = memo.score;
    let parts = 1;
    const anti = antiAffinityScore(g.mineByIndex[at]!, group.Count);
    if (anti !== null) { sum += anti; parts++; }
    if (g.affinities.length > 0) {
      let aff = g.affinityByIndex[at]!;
      if (Number.isNaN(aff)) g.affinityByIndex[at] = aff = affinityScore(g.affinities, node) ?? NO_AFFINITY;
      if (aff !== NO_AFFINITY) { sum += aff; parts++; }
    }
    g.baseByIndex[at] = sum;
    g.partsByIndex[at] = parts;
    return (g.fitByIndex[at] = FITS);
  }

  /** The plan changed the node at `at`: its fast-path answers are stale for every group. */
  private invalidate(at: number): void {
    this.at.refresh(at, this.candidates[at]!);
    for (const g of this.groups.values()) g.fitByIndex[at] = FIT_UNKNOWN;
  }

  /**
   * Scores a statically feasible node for the group into lastScore and lastPorts, or records why
   * it cannot take the group and answers false. `at` is the node's candidate position (-1: none).
   */
  private score(node: Node, at: number, group: TaskGroup, g: GroupCache, metric: AllocMetric, opts: SelectOptions): boolean {
    if (g.perAllocVolumes.length > 0 && !nodeHasHostVolumes(node.HostVolumes, g.perAllocVolumes, opts.allocName ?? '', this.job.Namespace, this.volumeById)) {
      recordFiltered(metric, node.NodeClass, FilterReason.MissingHostVolumes);
      return false;
    }
    if (
      g.singleWriterVolumes.length > 0 &&
      !singleWriterClaimsFree(this.state, this.job, node, g.singleWriterVolumes, opts.allocName ?? '', this.jobAllocsOnNode.get(node.ID))
    ) {
      recordFiltered(metric, node.NodeClass, FilterReason.MissingHostVolumes);
      return false;
    }
    if (g.distinct.length > 0 && !this.distinctAllows(node, group, g, this.jobAllocsOnNode.get(node.ID), metric)) return false;
    const ask = g.ask;
    let capCpu: number;
    let capMemory: number;
    let usedCpu: number;
    let usedMemory: number;
    let usedDisk: number;
    let capDisk: number;
    let u: ProposedNodeUsage;
    const c = this.at;
    if (at >= 0) {
      if (!c.loaded(at)) c.load(at, node);
      capCpu = c.capCpu[at]!;
      capMemory = c.capMemory[at]!;
      capDisk = c.capDisk[at]!;
      usedCpu = c.usedCpu[at]!;
      usedMemory = c.usedMemory[at]!;
      usedDisk = c.usedDisk[at]!;
    } else {
      const cap = nodeCapacity(node);
      u = this.usage.get(node.ID);
      capCpu = cap.cpu;
      capMemory = cap.memory;
      capDisk = cap.disk;
      usedCpu = u.cpu;
      usedMemory = u.memory;
      usedDisk = u.disk;
    }
    const dim =
      usedCpu + ask.cpu > capCpu ? 'cpu' : usedMemory + ask.memory > capMemory ? 'memory' : usedDisk + ask.disk > capDisk ? 'disk' : null;
    if (dim) {
      recordExhausted(metric, node.NodeClass, dim);
      return false;
    }
    let ports = NO_PORTS;
    if (ask.networks.length > 0) {
      const assigned = assignPorts(node, at >= 0 ? this.usage.get(node.ID) : u!, ask, this.random);
      if (typeof assigned === 'string') {
        recordExhausted(metric, node.NodeClass, assigned);
        return false;
      }
      ports = assigned;
    }
    this.lastPorts = ports;
    // Score: the mean of the scores that apply.
    let sum: number;
    if (at >= 0 && g.binPackCpu[at] === usedCpu && g.binPackMemory[at] === usedMemory) sum = g.binPackScore[at]!;
    else {
      sum = binPackScore(capCpu, capMemory, usedCpu + ask.cpu, usedMemory + ask.memory);
      if (at >= 0) {
        g.binPackCpu[at] = usedCpu;
        g.binPackMemory[at] = usedMemory;
        g.binPackScore[at] = sum;
      }
    }
    let count = 1;
    const mine = at >= 0 ? g.mineByIndex[at]! : this.jobAllocsOnNode.get(node.ID)?.get(group.Name) ?? 0;
    const anti = antiAffinityScore(mine, group.Count);
    if (anti !== null) { sum += anti; count++; }
    if (opts.penaltyNodeIds?.has(node.ID)) { sum += -1; count++; }
    if (g.affinities.length > 0) {
      let aff = at >= 0 ? g.affinityByIndex[at]! : Number.NaN;
      if (Number.isNaN(aff)) {
        aff = affinityScore(g.affinities, node) ?? NO_AFFINITY;
        if (at >= 0) g.affinityByIndex[at] = aff;
      }
      if (aff !== NO_AFFINITY) { sum += aff; count++; }
    }
    if (g.spreadScorer) {
      g.spreadScorer.score(node, at);
      const total = g.spreadScorer.result;
      if (total !== 0) { sum += total; count++; }
    }
    this.lastScore = sum / count;
    return true;
  }

  /** distinct_hosts and distinct_property against the allocations proposed so far. */
  private distinctAllows(node: Node, group: TaskGroup, g: GroupCache, onNode: Map<string, number> | undefined, metric: AllocMetric): boolean {
    for (const { constraint: c, groupScoped } of g.distinct) {
      if (c.Operand === DistinctOperator.Hosts) {
        if (c.RTarget === 'false') continue;
        let n = 0;
        if (onNode) {
          if (groupScoped) n = onNode.get(group.Name) ?? 0;
          else for (const v of onNode.values()) n += v;
        }
        if (n > 0) {
          recordFiltered(metric, node.NodeClass, constraintString(c));
          return false;
        }
      } else {
        const value = resolveTarget(c.LTarget, node);
        const limit = c.RTarget === '' ? 1 : Number(c.RTarget);
        const used = value === undefined ? 0 : this.counts(c.LTarget, groupScoped ? group.Name : null).get(value) ?? 0;
        if (value === undefined || !(used < (Number.isFinite(limit) ? limit : 1))) {
          recordFiltered(metric, node.NodeClass, constraintString(c));
          return false;
        }
      }
    }
    return true;
  }

  /** Records a placement so later selections see its resources and its job-mates. */
  recordPlacement(node: Node, group: TaskGroup, sel: { ask: GroupAsk; ports: PortAssignment; at?: number }): void {
    this.usage.add(node.ID, sel.ask.cpu, sel.ask.memory, sel.ask.disk, sel.ports.ports);
    this.bumpNode(node.ID, group.Name, 1);
    const at = sel.at !== undefined && sel.at >= 0 && this.candidates[sel.at] === node ? sel.at : this.positionOf(node.ID);
    if (at >= 0) {
      const g = this.groups.get(group.Name);
      if (g) g.mineByIndex[at]!++;
      this.invalidate(at);
    }
    for (const vc of this.valueCounts.values()) {
      if (vc.group !== null && vc.group !== group.Name) continue;
      const v = resolveTarget(vc.attribute, node);
      if (v !== undefined) vc.counts.set(v, (vc.counts.get(v) ?? 0) + 1);
    }
  }

  /** Records a stop so later selections may reuse its room. */
  recordStop(alloc: Allocation): void {
    this.usage.release(alloc);
    const pos = this.positionOf(alloc.NodeID);
    if (pos >= 0) this.invalidate(pos);
    const live = isLiveAlloc(alloc);
    if (alloc.JobID !== this.job.ID || !live || this.stoppedIds.has(alloc.ID)) return;
    this.stoppedIds.add(alloc.ID);
    const m = this.jobAllocsOnNode.get(alloc.NodeID);
    if (m && (m.get(alloc.TaskGroup) ?? 0) > 0) {
      m.set(alloc.TaskGroup, m.get(alloc.TaskGroup)! - 1);
      const g = this.groups.get(alloc.TaskGroup);
      const at = g ? this.positionOf(alloc.NodeID) : -1;
      if (g && at >= 0 && g.mineByIndex[at]! > 0) g.mineByIndex[at]!--;
    }
    const node = this.state.nodeById(alloc.NodeID);
    if (!node) return;
    for (const vc of this.valueCounts.values()) {
      if (vc.group !== null && vc.group !== alloc.TaskGroup) continue;
      const v = resolveTarget(vc.attribute, node);
      if (v !== undefined && (vc.counts.get(v) ?? 0) > 0) vc.counts.set(v, vc.counts.get(v)! - 1);
    }
  }
}

/**
 * What a group's static answers depend on: its constraints (job, group and tasks, distinct_*
 * included, which static checks skip) and its tasks' drivers. Groups with equal keys answer
 * every node alike.
 */
function groupShapeKey(job: Job, group: TaskGroup): string {
  const cs = groupConstraints(job, group).map((c) => [c.LTarget, c.Operand, c.RTarget]);
  const volumes = hostVolumeRequests(group.Volumes).map((v) => [v.Source, v.ReadOnly, v.PerAlloc, v.AccessMode, v.AttachmentMode]);
  // With host volumes the namespace counts too: a dynamic volume serves its own namespace only.
  return JSON.stringify([cs, group.Tasks.map((t) => t.Driver), volumes, volumes.length > 0 ? job.Namespace : '']);
}
