/**
 * Why a task group could not be placed, in the words Nomad's CLI uses for an AllocMetric
 * (its formatAllocMetrics): one reason a line, without the "* " bullet or indent, in Nomad's
 * order — no eligible nodes, empty datacenters, class and constraint filters, exhausted
 * resources, classes and dimensions, quotas. The CLI, the plan output and the server's log
 * all explain a placement failure from this one list.
 */
import type { AllocMetric } from './alloc.js';

/** The reasons of one task group's failed placement (possibly none, when the metric is empty). */
export function allocMetricReasons(m: AllocMetric): string[] {
  const out: string[] = [];
  if (m.NodesEvaluated === 0) out.push('No nodes were eligible for evaluation');
  for (const [dc, n] of Object.entries(m.NodesAvailable ?? {})) if (n === 0) out.push(`No nodes are available in datacenter ${JSON.stringify(dc)}`);
  for (const [cls, n] of Object.entries(m.ClassFiltered ?? {})) out.push(`Class ${JSON.stringify(cls)}: ${n} nodes excluded by filter`);
  for (const [c, n] of Object.entries(m.ConstraintFiltered ?? {})) out.push(`Constraint ${JSON.stringify(c)}: ${n} nodes excluded by filter`);
  if (m.NodesExhausted > 0) out.push(`Resources exhausted on ${m.NodesExhausted} nodes`);
  for (const [cls, n] of Object.entries(m.ClassExhausted ?? {})) out.push(`Class ${JSON.stringify(cls)} exhausted on ${n} nodes`);
  for (const [dim, n] of Object.entries(m.DimensionExhausted ?? {})) out.push(`Dimension ${JSON.stringify(dim)} exhausted on ${n} nodes`);
  for (const q of m.QuotaExhausted ?? []) out.push(`Quota limit hit ${JSON.stringify(q)}`);
  return out;
}
