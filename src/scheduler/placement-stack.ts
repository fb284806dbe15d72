/**
 * The placement stack of one evaluation: walks the job's candidate nodes in a random order,
 * filters them (static checks cached per group, distinct_* and resources per placement),
 * scores the feasible ones and picks the best of a small sample, as Nomad does: log2(n)
 * candidates (at least 2) for services, 2 for batch, every node when affinities or spreads
 * apply. Placements made are recorded so the next one sees them.
 */
import type { Affinity, AllocMetric, Allocation, Job, Node, Spread, TaskGroup } from '../structs/index.js';
import type { SchedulerState } from './interfaces.js';
import { newAllocMetric, recordExhausted, recordFiltered } from './alloc-metrics.js';
import { constraintString, DistinctOperator, resolveTarget } from './constraint-check.js';
import { distinctConstraints, groupConstraints, staticFilterReason } from './feasibility.js';
import { groupAsk, type GroupAsk } from '../structs/group-ask.js';
import { isLiveAlloc } from '../structs/alloc.js';
import { nodeCapacity, ProposedUsage } from './node-usage.js';
import { assignPorts, type PortAssignment } from './port-assignment.js';
import { affinityScore, antiAffinityScore, binPackScore, spreadBoost } from './rank.js';

/** A chosen node with its score and the ports assigned there. */
export interface Selection {
  node: Node;
  score: number;
  ports: PortAssignment;
  ask: GroupAsk;
}

/** Options of one selection. */
export interface SelectOptions {
  /** Nodes to score down (the node a failed allocation ran on). */
  penaltyNodeIds?: ReadonlySet<string>;
}

interface GroupCache {
  ask: GroupAsk;
  constraints: ReturnType<typeof groupConstraints>;
  distinct: ReturnType<typeof distinctConstraints>;
  affinities: Affinity[];
  spreads: Spread[];
  /** Static filter answers by candidate position (undefined: not computed yet). */
  staticByIndex: (string | null | undefined)[];
  staticReason: Map<string, string | null>;
}

/** Counts of job allocations by node attribute value, for spreads and distinct_property. */
interface ValueCounts {
  attribute: string;
  group: string | null;
  counts: Map<string, number>;
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

/** The placement stack; one per evaluation attempt. */
export class PlacementStack {
  private cursor = 0;
  private readonly groups = new Map<string, GroupCache>();
  /** Live allocations of this job per node, by group. */
  private readonly jobAllocsOnNode = new Map<string, Map<string, number>>();
  private readonly valueCounts = new Map<string, ValueCounts>();
  private readonly liveJobAllocs: Allocation[];
  private readonly stoppedIds = new Set<string>();
  readonly nodesAvailable: Record<string, number> = {};

  constructor(
    private readonly job: Job,
    /** Ready nodes in the job's datacenters and pool, in any order; shuffled here. */
    private readonly candidates: Node[],
    readonly usage: ProposedUsage,
    private readonly state: SchedulerState,
    private readonly random: () => number,
    jobAllocs: readonly Allocation[],
  ) {
    shuffle(this.candidates, random);
    for (const n of candidates) this.nodesAvailable[n.Datacenter] = (this.nodesAvailable[n.Datacenter] ?? 0) + 1;
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
      g = {
        ask: groupAsk(group),
        constraints: groupConstraints(this.job, group),
        distinct: distinctConstraints(this.job, group),
        affinities,
        spreads: [...(this.job.Spreads ?? []), ...(group.Spreads ?? [])],
        staticByIndex: new Array<string | null | undefined>(this.candidates.length),
        staticReason: new Map(),
      };
      this.groups.set(group.Name, g);
    }
    return g;
  }

  /** How many feasible candidates to compare for a group. */
  private sampleLimit(g: GroupCache): number {
    if (g.affinities.length > 0 || g.spreads.length > 0) return Number.MAX_SAFE_INTEGER;
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
    metric.NodesInPool = this.candidates.length;
    const g = this.groupCache(group);
    const limit = this.sampleLimit(g);
    const n = this.candidates.length;
    let best: Selection | null = null;
    let found = 0;
    for (let seen = 0; seen < n && found < limit; seen++) {
      const at = this.cursor;
      const node = this.candidates[at]!;
      this.cursor = (at + 1) % n;
      let reason = g.staticByIndex[at];
      if (reason === undefined) g.staticByIndex[at] = reason = staticFilterReason(g.constraints, group, node);
      const option = this.evaluate(node, group, g, metric, opts, reason);
      if (!option) continue;
      found++;
      if (!best || option.score > best.score) best = option;
    }
    if (best) metric.ScoreMetaData = [{ NodeID: best.node.ID, Scores: { normalized: best.score }, NormScore: best.score }];
    return { selection: best, metric };
  }

  /** Tries the group on one given node (system jobs). */
  selectOnNode(group: TaskGroup, node: Node): { selection: Selection | null; metric: AllocMetric } {
    const metric = newAllocMetric();
    metric.NodesAvailable = this.nodesAvailable;
    metric.NodesInPool = this.candidates.length;
    const g = this.groupCache(group);
    const selection = this.evaluate(node, group, g, metric, {}, this.staticReason(g, group, node));
    return { selection, metric };
  }

  /** True when the node passes the group's static checks (drivers, constraints). */
  staticallyFeasible(group: TaskGroup, node: Node): boolean {
    return this.staticReason(this.groupCache(group), group, node) === null;
  }

  private staticReason(g: GroupCache, group: TaskGroup, node: Node): string | null {
    let reason = g.staticReason.get(node.ID);
    if (reason === undefined) {
      reason = staticFilterReason(g.constraints, group, node);
      g.staticReason.set(node.ID, reason);
    }
    return reason;
  }

  private evaluate(node: Node, group: TaskGroup, g: GroupCache, metric: AllocMetric, opts: SelectOptions, reason: string | null): Selection | null {
    metric.NodesEvaluated++;
    if (reason !== null) {
      recordFiltered(metric, node.NodeClass, reason);
      return null;
    }
    const onNode = this.jobAllocsOnNode.get(node.ID);
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
          return null;
        }
      } else {
        const value = resolveTarget(c.LTarget, node);
        const limit = c.RTarget === '' ? 1 : Number(c.RTarget);
        const used = value === undefined ? 0 : this.counts(c.LTarget, groupScoped ? group.Name : null).get(value) ?? 0;
        if (value === undefined || !(used < (Number.isFinite(limit) ? limit : 1))) {
          recordFiltered(metric, node.NodeClass, constraintString(c));
          return null;
        }
      }
    }
    const cap = nodeCapacity(node);
    const u = this.usage.get(node.ID);
    const ask = g.ask;
    const dim =
      u.cpu + ask.cpu > cap.cpu ? 'cpu' : u.memory + ask.memory > cap.memory ? 'memory' : u.disk + ask.disk > cap.disk ? 'disk' : null;
    if (dim) {
      recordExhausted(metric, node.NodeClass, dim);
      return null;
    }
    const ports = assignPorts(node, u, ask, this.random);
    if (typeof ports === 'string') {
      recordExhausted(metric, node.NodeClass, ports);
      return null;
    }
    // Score: the mean of the scores that apply.
    let sum = binPackScore(cap.cpu, cap.memory, u.cpu + ask.cpu, u.memory + ask.memory);
    let count = 1;
    const anti = antiAffinityScore(onNode?.get(group.Name) ?? 0, group.Count);
    if (anti !== null) { sum += anti; count++; }
    if (opts.penaltyNodeIds?.has(node.ID)) { sum += -1; count++; }
    const aff = affinityScore(g.affinities, node);
    if (aff !== null) { sum += aff; count++; }
    const spreads = g.spreads;
    if (spreads.length > 0) {
      let total = 0;
      let weights = 0;
      for (const s of spreads) weights += Math.abs(s.Weight || 0) || 1;
      for (const s of spreads) {
        const w = (Math.abs(s.Weight || 0) || 1) / weights;
        const counts = this.counts(s.Attribute, group.Name);
        total += w * spreadBoost(counts, resolveTarget(s.Attribute, node), s.SpreadTarget, group.Count);
      }
      if (total !== 0) { sum += total; count++; }
    }
    return { node, score: sum / count, ports, ask };
  }

  /** Records a placement so later selections see its resources and its job-mates. */
  recordPlacement(node: Node, group: TaskGroup, sel: { ask: GroupAsk; ports: PortAssignment }): void {
    this.usage.add(node.ID, sel.ask.cpu, sel.ask.memory, sel.ask.disk, sel.ports.ports);
    this.bumpNode(node.ID, group.Name, 1);
    for (const vc of this.valueCounts.values()) {
      if (vc.group !== null && vc.group !== group.Name) continue;
      const v = resolveTarget(vc.attribute, node);
      if (v !== undefined) vc.counts.set(v, (vc.counts.get(v) ?? 0) + 1);
    }
  }

  /** Records a stop so later selections may reuse its room. */
  recordStop(alloc: Allocation): void {
    this.usage.release(alloc);
    const live = isLiveAlloc(alloc);
    if (alloc.JobID !== this.job.ID || !live || this.stoppedIds.has(alloc.ID)) return;
    this.stoppedIds.add(alloc.ID);
    const m = this.jobAllocsOnNode.get(alloc.NodeID);
    if (m && (m.get(alloc.TaskGroup) ?? 0) > 0) m.set(alloc.TaskGroup, m.get(alloc.TaskGroup)! - 1);
    const node = this.state.nodeById(alloc.NodeID);
    if (!node) return;
    for (const vc of this.valueCounts.values()) {
      if (vc.group !== null && vc.group !== alloc.TaskGroup) continue;
      const v = resolveTarget(vc.attribute, node);
      if (v !== undefined && (vc.counts.get(v) ?? 0) > 0) vc.counts.set(v, vc.counts.get(v)! - 1);
    }
  }
}
