/**
 * `caravan job status [ID]`: without an ID, every job in a table; with one (or a prefix), the
 * job's details, its per-group summary, why it could not be placed (while an evaluation is
 * blocked), its latest deployment (service jobs) and its allocations.
 */
import type { Command } from 'commander';
import type { AllocListStub, Deployment, Evaluation, Job, JobListStub, JobSummary } from '../../structs/index.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { boldTitles, styleFor } from '../format/colorize.js';
import { formatColumns, formatKV, short } from '../format/columns.js';
import { latestFailedPlacement, formatPlacementFailures } from '../format/placement-failures.js';
import { formatAgo, formatUnixNanos } from '../format/time-format.js';
import { formatDeployedTable } from './deployment-format.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { resolveJobId } from './job-lookup.js';

/** The table of `job status` without an ID. */
export function formatJobList(jobs: JobListStub[]): string {
  if (jobs.length === 0) return 'No running jobs';
  const rows = [['ID', 'Type', 'Priority', 'Status', 'Submit Date']];
  for (const j of jobs) rows.push([j.ID, j.Type, String(j.Priority), j.Stop ? `${j.Status} (stopped)` : j.Status, formatUnixNanos(j.SubmitTime)]);
  return formatColumns(rows);
}

/** The allocations table shared by job status and node status. */
export function formatAllocTable(allocs: AllocListStub[], nowMs: number, verbose = false): string {
  if (allocs.length === 0) return 'No allocations placed';
  const rows = [['ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified']];
  const sorted = [...allocs].sort((a, b) => b.CreateIndex - a.CreateIndex);
  for (const a of sorted) {
    rows.push([short(a.ID, verbose), short(a.NodeID, verbose), a.TaskGroup, String(a.JobVersion), a.DesiredStatus, a.ClientStatus, formatAgo(a.CreateTime, nowMs), formatAgo(a.ModifyTime, nowMs)]);
  }
  return formatColumns(rows);
}

/** The "Latest Deployment" section of `job status`, as Nomad prints it. */
export function formatLatestDeployment(d: Deployment, verbose = false): string {
  const kv = formatKV([
    ['ID', short(d.ID, verbose)],
    ['Status', d.Status],
    ['Description', d.StatusDescription],
  ]);
  if (Object.keys(d.TaskGroups).length === 0) return `Latest Deployment\n${kv}`;
  return `Latest Deployment\n${kv}\n\nDeployed\n${formatDeployedTable(d)}`;
}

/**
 * The detail view of one job; `deployment` is its latest one, shown between summary and
 * allocations, after the placement failures of `evals` while one of them is blocked.
 */
export function formatJobDetail(job: Job, summary: JobSummary | null, allocs: AllocListStub[], nowMs: number, verbose = false, deployment: Deployment | null = null, evals: readonly Evaluation[] = []): string {
  const parts: string[] = [];
  parts.push(
    formatKV([
      ['ID', job.ID],
      ['Name', job.Name],
      ['Submit Date', formatUnixNanos(job.SubmitTime)],
      ['Type', job.Type],
      ['Priority', String(job.Priority)],
      ['Datacenters', (job.Datacenters ?? []).join(',')],
      ['Namespace', job.Namespace],
      ['Node Pool', job.NodePool],
      ['Status', job.Stop ? 'dead (stopped)' : job.Status],
      ['Periodic', String(job.Periodic?.Enabled ?? false)],
      ['Parameterized', String(job.ParameterizedJob !== null && job.ParameterizedJob !== undefined)],
    ]),
  );
  if (summary) {
    const rows = [['Task Group', 'Queued', 'Starting', 'Running', 'Failed', 'Complete', 'Lost', 'Unknown']];
    for (const [tg, s] of Object.entries(summary.Summary).sort(([a], [b]) => a.localeCompare(b))) {
      rows.push([tg, String(s.Queued), String(s.Starting), String(s.Running), String(s.Failed), String(s.Complete), String(s.Lost), String(s.Unknown)]);
    }
    parts.push(`Summary\n${formatColumns(rows)}`);
  }
  const failed = latestFailedPlacement(evals);
  if (failed) parts.push(`Placement Failure\n${formatPlacementFailures(failed)}`);
  if (deployment) parts.push(formatLatestDeployment(deployment, verbose));
  parts.push(`Allocations\n${formatAllocTable(allocs, nowMs, verbose)}`);
  return parts.join('\n\n');
}

/** The section titles `job status` bolds on a terminal, as Nomad. */
const JOB_STATUS_TITLES = ['Summary', 'Placement Failure', 'Latest Deployment', 'Deployed', 'Allocations'];

/** Registers `job status`. */
export const jobStatusCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('status')
        .description('Display the status of jobs')
        .argument('[id]', 'job ID or prefix')
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string | undefined, opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying jobs', async () => {
        const api = apiClient(ctx, opts);
        if (id === undefined) {
          const { body } = await api.get<JobListStub[]>('/v1/jobs');
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`${formatJobList(body)}\n`);
          return ExitCode.Ok;
        }
        const jobId = await resolveJobId(api, id);
        const path = `/v1/job/${encodeURIComponent(jobId)}`;
        const [{ body: job }, { body: summary }, { body: allocs }, { body: evals }] = await Promise.all([
          api.get<Job>(path),
          api.get<JobSummary>(`${path}/summary`).catch(() => ({ body: null, index: 0 })),
          api.get<AllocListStub[]>(`${path}/allocations`),
          // Only for the placement failures: a failed read hides that section, as a missing summary hides its own.
          api.get<Evaluation[]>(`${path}/evaluations`).catch(() => ({ body: [] as Evaluation[], index: 0 })),
        ]);
        // As Nomad: only service jobs roll out through deployments. A failed read only hides the section.
        const deployment = job.Type === 'service'
          ? (await api.get<Deployment | null>(`${path}/deployment`).catch(() => ({ body: null }))).body
          : null;
        if (opts.json) printJson(ctx, { Job: job, Summary: summary, Allocations: allocs, LatestDeployment: deployment });
        else ctx.stdout.write(`${boldTitles(formatJobDetail(job, summary, allocs, Date.now(), opts.verbose, deployment, evals), styleFor(ctx, opts), JOB_STATUS_TITLES)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
