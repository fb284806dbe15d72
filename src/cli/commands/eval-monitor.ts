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
import { formatTimeMs } from '../format/time-format.js';
import { monitorDeployment } from './deployment-monitor.js';

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

/**
 * Monitors `evalId` to completion, printing Nomad's monitor lines (each with the time it was
 * printed); returns the exit code. An allocation the evaluation placed is "created"; one it
 * changed in place (created before the evaluation, e.g. by a scale up) is "modified".
 */
export async function monitorEval(ctx: CliContext, api: ApiClient, evalId: string, verbose = false): Promise<number> {
  return (await followEval(ctx, api, evalId, verbose)).code;
}

/**
 * monitorEval, then the deployment the evaluation runs in (when it placed everything), as
 * `nomad job scale` and `job revert` follow the rollout they start.
 */
export async function monitorEvalAndDeployment(ctx: CliContext, api: ApiClient, evalId: string, verbose = false): Promise<number> {
  const { code, evaluation } = await followEval(ctx, api, evalId, verbose);
  if (code !== 0 || !evaluation?.DeploymentID) return code;
  return monitorDeployment(ctx, api, evaluation.DeploymentID, verbose);
}

async function followEval(ctx: CliContext, api: ApiClient, evalId: string, verbose: boolean): Promise<{ code: number; evaluation: Evaluation | null }> {
  const now = (): string => formatTimeMs(Date.now());
  const info = (s: string) => ctx.stdout.write(`==> ${now()}: ${s}\n`);
  const out = (s: string) => ctx.stdout.write(`    ${now()}: ${s}\n`);
  info(`Monitoring evaluation "${short(evalId, verbose)}"`);
  let current = evalId;
  for (;;) {
    const ev = await waitForEval(api, current);
    out(`Evaluation triggered by job "${ev.JobID}"`);
    if (ev.DeploymentID) out(`Evaluation within deployment: "${short(ev.DeploymentID, verbose)}"`);
    const { body: allocs } = await api.get<AllocListStub[]>(`/v1/evaluation/${encodeURIComponent(ev.ID)}/allocations`);
    for (const a of allocs) {
      const verb = a.CreateIndex < ev.CreateIndex ? 'modified' : 'created';
      if (verb === 'created' && a.DesiredStatus !== 'run') continue;
      out(`Allocation "${short(a.ID, verbose)}" ${verb}: node "${short(a.NodeID, verbose)}", group "${a.TaskGroup}"`);
    }
    out(`Evaluation status changed: "pending" -> "${ev.Status}"`);
    if (ev.NextEval && ev.Status !== 'complete') {
      info(`Monitoring next evaluation "${short(ev.NextEval, verbose)}"`);
      current = ev.NextEval;
      continue;
    }
    const failed = Object.entries(ev.FailedTGAllocs ?? {});
    if (failed.length === 0) {
      info(`Evaluation "${short(ev.ID, verbose)}" finished with status "${ev.Status}"`);
      return { code: ev.Status === 'complete' ? 0 : 1, evaluation: ev };
    }
    info(`Evaluation "${short(ev.ID, verbose)}" finished with status "${ev.Status}" but failed to place all allocations:`);
    for (const [group, metric] of failed.sort(([a], [b]) => a.localeCompare(b))) {
      for (const line of describeFailedGroup(group, metric)) ctx.stdout.write(`    ${line}\n`);
    }
    if (ev.BlockedEval) out(`Evaluation "${short(ev.BlockedEval, verbose)}" waiting for additional capacity to place remainder`);
    return { code: 2, evaluation: ev };
  }
}
