/**
 * Following an evaluation to its end, as `nomad job run` does: block on the evaluation until
 * it leaves "pending", print the allocations it created, and explain placement failures from
 * FailedTGAllocs. Returns 0 when everything was placed, 2 when placement failed (Nomad's code).
 */
import type { AllocListStub, AllocMetric, Evaluation } from '../../structs/index.js';
import { allocMetricReasons } from '../../structs/alloc-metric-reasons.js';
import type { ApiClient } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { short } from '../format/columns.js';

/** Lines explaining why a task group could not be placed, indented under its header. */
export function describeFailedGroup(group: string, m: AllocMetric): string[] {
  const failed = 1 + (m.CoalescedFailures ?? 0);
  const lines = [`Task Group "${group}" (failed to place ${failed} allocation${failed === 1 ? '' : 's'}):`];
  for (const reason of allocMetricReasons(m)) lines.push(`  * ${reason}`);
  return lines;
}

/** Blocks until the evaluation is no longer pending; returns it. */
export async function waitForEval(api: ApiClient, evalId: string): Promise<Evaluation> {
  let index = 0;
  for (;;) {
    const { body, index: next } = await api.get<Evaluation>(`/v1/evaluation/${encodeURIComponent(evalId)}`, index > 0 ? { index, wait: '5m' } : {});
    if (body.Status !== 'pending') return body;
    index = Math.max(next, index);
  }
}

/** Monitors `evalId` to completion, printing Nomad's monitor lines; returns the exit code. */
export async function monitorEval(ctx: CliContext, api: ApiClient, evalId: string, verbose = false): Promise<number> {
  const out = (s: string) => ctx.stdout.write(`${s}\n`);
  out(`==> Monitoring evaluation "${short(evalId, verbose)}"`);
  let current = evalId;
  for (;;) {
    const ev = await waitForEval(api, current);
    out(`    Evaluation triggered by job "${ev.JobID}"`);
    const { body: allocs } = await api.get<AllocListStub[]>(`/v1/evaluation/${encodeURIComponent(ev.ID)}/allocations`);
    for (const a of allocs) {
      out(`    Allocation "${short(a.ID, verbose)}" created: node "${short(a.NodeID, verbose)}", group "${a.TaskGroup}"`);
    }
    out(`    Evaluation status changed: "pending" -> "${ev.Status}"`);
    if (ev.NextEval && ev.Status !== 'complete') {
      out(`==> Monitoring next evaluation "${short(ev.NextEval, verbose)}"`);
      current = ev.NextEval;
      continue;
    }
    const failed = Object.entries(ev.FailedTGAllocs ?? {});
    if (failed.length === 0) {
      out(`==> Evaluation "${short(ev.ID, verbose)}" finished with status "${ev.Status}"`);
      return ev.Status === 'complete' ? 0 : 1;
    }
    out(`==> Evaluation "${short(ev.ID, verbose)}" finished with status "${ev.Status}" but failed to place all allocations:`);
    for (const [group, metric] of failed.sort(([a], [b]) => a.localeCompare(b))) {
      for (const line of describeFailedGroup(group, metric)) out(`    ${line}`);
    }
    if (ev.BlockedEval) out(`    Evaluation "${short(ev.BlockedEval, verbose)}" waiting for additional capacity to place remainder`);
    return 2;
  }
}
