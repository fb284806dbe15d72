/**
 * The "Placement Failure" section of `job status`, as Nomad's: shown while the job has a blocked
 * evaluation (it is waiting for capacity), from its latest evaluation with failed task groups —
 * at most five groups, in name order, each with the reasons of formatAllocMetrics indented by
 * two spaces; more groups point at `eval status`.
 */
import { allocMetricReasons } from '../../structs/alloc-metric-reasons.js';
import type { Evaluation } from '../../structs/index.js';

/** Nomad's cap on the task groups the section lists. */
const MAX_FAILED_TGS = 5;

/** The evaluation whose failures `job status` explains, or null when it shows none. */
export function latestFailedPlacement(evals: readonly Evaluation[]): Evaluation | null {
  if (!evals.some((e) => e.Status === 'blocked')) return null;
  let latest: Evaluation | null = null;
  for (const e of evals) {
    if (Object.keys(e.FailedTGAllocs ?? {}).length === 0) continue;
    if (!latest || latest.CreateIndex < e.CreateIndex) latest = e;
  }
  return latest;
}

/** The section's body (without its "Placement Failure" header), for an evaluation with failures. */
export function formatPlacementFailures(e: Evaluation, cliName = 'caravan'): string {
  const failed = e.FailedTGAllocs ?? {};
  const groups = Object.keys(failed).sort();
  const blocks = groups.slice(0, MAX_FAILED_TGS).map((g) => [`Task Group ${JSON.stringify(g)}:`, ...allocMetricReasons(failed[g]!).map((r) => `  * ${r}`)].join('\n'));
  let out = blocks.join('\n\n');
  if (groups.length > MAX_FAILED_TGS) out += `\n\nPlacement failures truncated. To see remainder run:\n${cliName} eval status ${e.ID}`;
  return out;
}
