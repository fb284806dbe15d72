/**
 * Following a deployment to its end, as `nomad job run` and `nomad deployment status -monitor`
 * do: block on the deployment, print each change of its description and counts, and finish
 * with its status block. Returns 0 when it succeeded, 1 when it failed or was cancelled.
 */
import type { Deployment } from '../../structs/index.js';
import { isTerminalDeploymentStatus } from '../../structs/deployment.js';
import type { ApiClient } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { short } from '../format/columns.js';
import { formatTimeMs } from '../format/time-format.js';
import { formatDeployment } from './deployment-format.js';

function isTerminal(d: Deployment): boolean {
  return isTerminalDeploymentStatus(d.Status);
}

/** One progress line: the description and each group's healthy/desired. */
function progressLine(d: Deployment): string {
  const groups = Object.entries(d.TaskGroups)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, s]) => `${name} ${s.HealthyAllocs}/${s.DesiredTotal} healthy${s.DesiredCanaries > 0 ? `, canaries ${s.DesiredCanaries}${s.Promoted ? ' promoted' : ''}` : ''}`);
  return `${d.Status}: ${d.StatusDescription}${groups.length > 0 ? ` (${groups.join('; ')})` : ''}`;
}

/** Monitors a deployment to its end (see the file comment). */
export async function monitorDeployment(ctx: CliContext, api: ApiClient, deploymentId: string, verbose = false): Promise<number> {
  const out = (s: string) => ctx.stdout.write(`${s}\n`);
  out('');
  out(`==> ${formatTimeMs(Date.now())}: Monitoring deployment "${short(deploymentId, verbose)}"`);
  let index = 0;
  let last = '';
  for (;;) {
    const { body: d, index: next } = await api.get<Deployment>(
      `/v1/deployment/${encodeURIComponent(deploymentId)}`,
      index > 0 ? { index, wait: '5m' } : {},
    );
    const line = progressLine(d);
    if (line !== last) {
      out(`    ${formatTimeMs(Date.now())}: ${line}`);
      last = line;
    }
    if (isTerminal(d)) {
      const mark = d.Status === 'successful' ? '✓' : '!';
      out(`  ${mark} Deployment "${short(d.ID, verbose)}" ${d.Status}`);
      out('');
      for (const l of formatDeployment(d, verbose).split('\n')) out(`    ${l}`);
      return d.Status === 'successful' ? 0 : 1;
    }
    index = Math.max(next, index);
  }
}

/**
 * The deployment a job registration started, if any: the job's latest deployment when it
 * belongs to the registered job spec (by JobSpecModifyIndex).
 */
export async function deploymentOfRegistration(api: ApiClient, jobId: string, jobModifyIndex: number): Promise<Deployment | null> {
  const { body } = await api.get<Deployment | null>(`/v1/job/${encodeURIComponent(jobId)}/deployment`);
  if (!body || body.JobSpecModifyIndex !== jobModifyIndex) return null;
  return body;
}
