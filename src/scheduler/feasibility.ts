/**
 * Node feasibility for a task group: the checks that depend only on the node (status,
 * datacenter, pool, drivers, constraints). Answers the reason a node was filtered, keyed as
 * Nomad's AllocMetric.ConstraintFiltered keys it, or null when the node is feasible.
 */
import type { Constraint, Job, Node, TaskGroup } from '../structs/index.js';
import { constraintString, datacenterMatches, DistinctOperator, nodeMeetsConstraint } from './constraint-check.js';
import { computedClass, constraintEscapesClass } from './node-class.js';
import { hostVolumeRequests, nodeHasHostVolumes, type VolumeRequest } from '../structs/host-volume.js';
import type { HostVolume } from '../structs/dynamic-host-volume.js';

/** Reason keys for filters that are not user constraints. */
export const FilterReason = {
  MissingDrivers: 'missing drivers',
  MissingNetwork: 'missing network',
  /** Nomad's FilterConstraintHostVolumes. */
  MissingHostVolumes: 'missing compatible host volumes',
} as const;

/** The CNI plugins a bridge-mode group needs on its node (the client fingerprints them as attributes). */
const BRIDGE_PLUGIN_ATTRIBUTES = ['bridge', 'host-local', 'loopback', 'firewall', 'portmap'].map((p) => `plugins.cni.version.${p}`);

/** True when the node can take new allocations at all: ready, eligible, not draining. */
export function nodeIsReady(node: Node): boolean {
  return node.Status === 'ready' && node.SchedulingEligibility === 'eligible' && node.DrainStrategy === null && !node.Drain;
}

/** True when the node is in one of the job's datacenters and its node pool ("all" matches every pool). */
export function nodeInJobScope(job: Job, node: Node): boolean {
  const dcs = job.Datacenters && job.Datacenters.length > 0 ? job.Datacenters : ['*'];
  if (!datacenterMatches(node.Datacenter, dcs)) return false;
  const pool = job.NodePool || 'default';
  return pool === 'all' || pool === (node.NodePool || 'default');
}

/** Every hard constraint of the group: job's, group's and its tasks', in that order. */
export function groupConstraints(job: Job, group: TaskGroup): Constraint[] {
  const out: Constraint[] = [...(job.Constraints ?? []), ...(group.Constraints ?? [])];
  for (const t of group.Tasks) out.push(...(t.Constraints ?? []));
  return out;
}

/** The constraints that depend on other allocations (distinct_hosts, distinct_property). */
export function distinctConstraints(job: Job, group: TaskGroup): { constraint: Constraint; groupScoped: boolean }[] {
  const out: { constraint: Constraint; groupScoped: boolean }[] = [];
  for (const c of job.Constraints ?? []) if (isDistinct(c)) out.push({ constraint: c, groupScoped: false });
  for (const c of group.Constraints ?? []) if (isDistinct(c)) out.push({ constraint: c, groupScoped: true });
  for (const t of group.Tasks) for (const c of t.Constraints ?? []) if (isDistinct(c)) out.push({ constraint: c, groupScoped: true });
  return out;
}

function isDistinct(c: Constraint): boolean {
  return c.Operand === DistinctOperator.Hosts || c.Operand === DistinctOperator.Property;
}

/** Where a static check failed: the reason, and the position of the constraint (-1: drivers). */
interface ClassAnswer {
  reason: string | null;
  at: number;
}

/**
 * Static feasibility of one task group, answered once per computed node class: drivers and the
 * constraints that read only class-wide values are checked for the first node of a class and
 * reused for the others; constraints reading a `unique.` value are checked per node. The answer
 * is the first failing check in the group's order: drivers, then constraints as groupConstraints
 * lists them.
 */
export class ClassFeasibility {
  private readonly byClass = new Map<number, ClassAnswer>();
  /** Per-node constraints with their positions in the group's order. */
  private readonly escaped: { c: Constraint; at: number }[] = [];
  private readonly classWide: { c: Constraint; at: number }[] = [];
  /**
   * The group's host volumes that do not depend on the allocation (per_alloc ones are checked
   * per placement, PlacementStack.score). Checked per node: a node's volumes are not in its class.
   */
  private readonly hostVolumes: VolumeRequest[];

  constructor(
    constraints: readonly Constraint[],
    private readonly group: TaskGroup,
    /** The job's namespace: dynamic host volumes serve their own namespace only. */
    private readonly namespace?: string,
    /** Dynamic host volumes by ID, for their state and capabilities (SchedulerState.hostVolumeById). */
    private readonly volumeById?: (id: string) => HostVolume | undefined,
  ) {
    constraints.forEach((c, at) => {
      if (isDistinct(c)) return;
      (constraintEscapesClass(c) ? this.escaped : this.classWide).push({ c, at });
    });
    this.hostVolumes = hostVolumeRequests(group.Volumes).filter((v) => !v.PerAlloc);
  }

  /** True when some check must be made per node: then equal classes may answer differently. */
  get perNode(): boolean {
    return this.escaped.length > 0 || this.hostVolumes.length > 0;
  }

  /** The reason the node cannot run the group regardless of load, or null when it can. */
  reason(node: Node): string | null {
    const cls = computedClass(node);
    let answer = this.byClass.get(cls);
    if (!answer) {
      answer = this.classAnswer(node);
      this.byClass.set(cls, answer);
    }
    for (const { c, at } of this.escaped) {
      if (at > answer.at && answer.reason !== null) break;
      if (!nodeMeetsConstraint(c, node)) return constraintString(c);
    }
    // Nomad checks host volumes after drivers and constraints.
    if (answer.reason === null && !nodeHasHostVolumes(node.HostVolumes, this.hostVolumes, '', this.namespace, this.volumeById)) return FilterReason.MissingHostVolumes;
    return answer.reason;
  }

  private classAnswer(node: Node): ClassAnswer {
    for (const t of this.group.Tasks) {
      const d = node.Drivers?.[t.Driver];
      if (!d || !d.Detected || !d.Healthy) return { reason: FilterReason.MissingDrivers, at: -1 };
    }
    // Bridge mode runs Nomad's conflist: a node without its plugins cannot set it up.
    if (this.group.Networks?.[0]?.Mode === 'bridge' && BRIDGE_PLUGIN_ATTRIBUTES.some((a) => !node.Attributes?.[a])) {
      return { reason: FilterReason.MissingNetwork, at: -1 };
    }
    for (const { c, at } of this.classWide) {
      if (!nodeMeetsConstraint(c, node)) return { reason: constraintString(c), at };
    }
    return { reason: null, at: Number.MAX_SAFE_INTEGER };
  }
}
