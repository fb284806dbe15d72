/** Why allocations could not be placed, in words, from an evaluation's FailedTGAllocs metrics. */
import type { AllocMetric } from '../../../src/structs/alloc.js';

function entries(m: Record<string, number> | null | undefined): string[] {
  return Object.entries(m ?? {}).map(([k, n]) => `${k} (${n} node${n === 1 ? '' : 's'})`);
}

/** The sentences for one group's metric. */
export function explainPlacement(m: AllocMetric): string[] {
  const out: string[] = [];
  out.push(`${m.CoalescedFailures + 1} allocation${m.CoalescedFailures ? 's' : ''} not placed; ${m.NodesEvaluated} node${m.NodesEvaluated === 1 ? '' : 's'} evaluated${m.NodesInPool ? ` of ${m.NodesInPool} in the pool` : ''}.`);
  if (m.NodesEvaluated === 0) out.push('No node is ready and eligible in the job’s datacenters and node pool.');
  const avail = Object.entries(m.NodesAvailable ?? {});
  if (avail.length > 0) out.push(`Nodes available per datacenter: ${avail.map(([dc, n]) => `${dc}: ${n}`).join(', ')}.`);
  const constraint = entries(m.ConstraintFiltered);
  if (constraint.length) out.push(`Filtered by constraint: ${constraint.join(', ')}.`);
  const cls = entries(m.ClassFiltered);
  if (cls.length) out.push(`Filtered by node class: ${cls.join(', ')}.`);
  if (m.NodesExhausted) out.push(`${m.NodesExhausted} node${m.NodesExhausted === 1 ? '' : 's'} had not enough resources.`);
  const dim = entries(m.DimensionExhausted);
  if (dim.length) out.push(`Exhausted: ${dim.join(', ')}.`);
  if (m.QuotaExhausted?.length) out.push(`Quota exhausted: ${m.QuotaExhausted.join(', ')}.`);
  return out;
}

export function PlacementFailures({ failed }: { failed: Record<string, AllocMetric> }) {
  return (
    <div class="state error" role="note" data-testid="placement-failures">
      {Object.entries(failed).map(([group, m]) => (
        <div key={group}>
          <strong>Group “{group}”:</strong>
          <ul>
            {explainPlacement(m).map((s, i) => (
              <li key={i}>{s}</li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}
