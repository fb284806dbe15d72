/**
 * Node feasibility for a task group: the checks that depend only on the node (status,
 * datacenter, pool, drivers, constraints). Answers the reason a node was filtered, keyed as
 * Nomad's AllocMetric.ConstraintFiltered keys it, or null when the node is feasible.
 */
import type { Constraint, Job, Node, TaskGroup } from '../structs/index.js';
import { constraintString, datacenterMatches, DistinctOperator, nodeMeetsConstraint } from './constraint-check.js';

/** Reason keys for filters that are not user constraints. */
export const FilterReason = {
  MissingDrivers: 'missing drivers',
} as const;

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

/** The reason the node cannot run the group regardless of load, or null when it can. */
export function staticFilterReason(constraints: readonly Constraint[], group: TaskGroup, node: Node): string | null {
  for (const t of group.Tasks) {
    const d = node.Drivers?.[t.Driver];
    if (!d || !d.Detected || !d.Healthy) return FilterReason.MissingDrivers;
  }
  for (const c of constraints) {
    if (isDistinct(c)) continue;
    if (!nodeMeetsConstraint(c, node)) return constraintString(c);
  }
  return null;
}
