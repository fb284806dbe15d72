/**
 * `caravan alloc status ID`: an allocation's details (its deployment and health, with -verbose
 * the placement figures), its group network's addresses, then per task what it was given and
 * uses, its state and its recent events (newest first), as Nomad prints them. `-stats` adds
 * what the client measured; `-short` shows one line per task; `-verbose` full IDs, absolute
 * times and the placement metrics.
 */
import type { Command } from 'commander';
import type { AllocResourceUsage } from '../../http/routes/client-alloc.js';
import { allocMetricReasons } from '../../structs/alloc-metric-reasons.js';
import { isTerminalClientStatus } from '../../structs/index.js';
import type { Allocation, TaskState } from '../../structs/alloc.js';
import { formatDuration } from '../../structs/duration.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { boldTitles, styleFor } from '../format/colorize.js';
import { formatColumns, formatKV, short } from '../format/columns.js';
import { formatAllocAddresses, formatResourceUsage, formatTaskResources, taskUsage } from '../format/task-resources.js';
import { formatAgo, formatIsoTime, formatUnixNanos } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

/** What `alloc status` shows besides the allocation. */
export interface AllocDetailOptions {
  verbose?: boolean;
  /** The client's answer to the stats request, or null when it gave none. */
  stats?: AllocResourceUsage | null;
  /** `-stats`: the measured tables under each task's resources. */
  displayStats?: boolean;
}

/** The events table of one task, newest first. */
export function formatTaskEvents(state: TaskState): string {
  const rows = [['Time', 'Type', 'Description']];
  for (const e of [...(state.Events ?? [])].reverse()) {
    rows.push([formatUnixNanos(e.Time), e.Type, e.DisplayMessage || e.Message || '']);
  }
  return formatColumns(rows);
}

function basicInfo(a: Allocation, nowMs: number, verbose: boolean): string {
  const when = (ns: number): string => (verbose ? formatUnixNanos(ns) : formatAgo(ns, nowMs));
  const pairs: [string, string][] = [
    ['ID', a.ID],
    ['Eval ID', short(a.EvalID, verbose)],
    ['Name', a.Name],
    ['Node ID', short(a.NodeID, verbose)],
    ['Node Name', a.NodeName],
    ['Job ID', a.JobID],
    ['Job Version', String(a.Job?.Version ?? 0)],
    ['Client Status', a.ClientStatus],
    ['Client Description', a.ClientDescription || '<none>'],
    ['Desired Status', a.DesiredStatus],
    ['Desired Description', a.DesiredDescription || '<none>'],
    ['Created', when(a.CreateTime)],
    ['Modified', when(a.ModifyTime)],
  ];
  if (a.DeploymentID) {
    const healthy = a.DeploymentStatus?.Healthy;
    pairs.push(['Deployment ID', short(a.DeploymentID, verbose)], ['Deployment Health', healthy === true ? 'healthy' : healthy === false ? 'unhealthy' : 'unset']);
    if (a.DeploymentStatus?.Canary) pairs.push(['Canary', 'true']);
  }
  if (a.NextAllocation) pairs.push(['Replacement Alloc ID', short(a.NextAllocation, verbose)]);
  if (verbose && a.Metrics) {
    const m = a.Metrics;
    pairs.push(
      ['Evaluated Nodes', String(m.NodesEvaluated)],
      ['Filtered Nodes', String(m.NodesFiltered)],
      ['Exhausted Nodes', String(m.NodesExhausted)],
      ['Allocation Time', formatDuration(m.AllocationTime)],
      ['Failures', String(m.CoalescedFailures)],
    );
  }
  return formatKV(pairs);
}

function taskDetail(a: Allocation, task: string, st: TaskState, o: AllocDetailOptions): string {
  const parts = [`Task "${task}" is "${st.State}"`];
  const usage = taskUsage(o.stats ?? null, task);
  const resources = formatTaskResources(a, task, usage);
  if (resources) parts.push(resources);
  if (resources && usage && o.displayStats) parts.push('', formatResourceUsage(usage));
  if (resources) parts.push('');
  parts.push(
    'Task Events:',
    formatKV([
      ['Started At', formatIsoTime(st.StartedAt)],
      ['Finished At', formatIsoTime(st.FinishedAt)],
      ['Total Restarts', String(st.Restarts)],
      ['Last Restart', formatIsoTime(st.LastRestart)],
    ]),
    '',
    `Recent Events:\n${formatTaskEvents(st)}`,
  );
  return parts.join('\n');
}

/** Task names in Nomad's order: by name, prestart tasks before sidecars before main tasks. */
function sortedTasks(a: Allocation): string[] {
  const lifecycles = a.AllocatedResources?.TaskLifecycles ?? {};
  const rank = (t: string): number => {
    const lc = lifecycles[t];
    return !lc || !lc.Hook ? 2 : lc.Sidecar ? 1 : 0;
  };
  return Object.keys(a.TaskStates ?? {}).sort((x, y) => rank(x) - rank(y) || x.localeCompare(y));
}

/** The detail view of one allocation. */
export function formatAllocDetail(a: Allocation, nowMs: number, o: AllocDetailOptions = {}): string {
  const verbose = o.verbose ?? false;
  const parts = [basicInfo(a, nowMs, verbose)];
  const addresses = formatAllocAddresses(a);
  if (addresses) parts.push(addresses);
  for (const task of sortedTasks(a)) parts.push(taskDetail(a, task, a.TaskStates![task]!, o));
  if (verbose && a.Metrics) parts.push(`Placement Metrics\n${allocMetricReasons(a.Metrics).map((r) => `  * ${r}`).join('\n')}`);
  return parts.join('\n\n');
}

/** `alloc status -short`: the allocation's name and times, then one line per task. */
export function formatAllocShort(a: Allocation, nowMs: number): string {
  const kv = formatKV([
    ['ID', a.ID],
    ['Name', a.Name],
    ['Created', formatAgo(a.CreateTime, nowMs)],
    ['Modified', formatAgo(a.ModifyTime, nowMs)],
  ]);
  const tasks = a.Job?.TaskGroups.find((g) => g.Name === a.TaskGroup)?.Tasks ?? [];
  const rows = [['Name', 'State', 'Last Event', 'Time', 'Lifecycle']];
  for (const name of sortedTasks(a)) {
    const st = a.TaskStates![name]!;
    const last = st.Events.at(-1);
    const lc = tasks.find((t) => t.Name === name)?.Lifecycle;
    rows.push([name, st.State, last?.Type ?? '', last ? formatUnixNanos(last.Time) : '', lc?.Hook ? `${lc.Hook}${lc.Sidecar ? ' sidecar' : ''}` : 'main']);
  }
  return `${kv}\n\nTasks\n${formatColumns(rows)}`;
}

/** The section titles `alloc status` bolds on a terminal, as Nomad. */
const ALLOC_STATUS_TITLES = [/^Task ".*" is ".*"$/, 'Placement Metrics', 'Tasks'];

/** Registers `alloc status`. */
export const allocStatusCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('status')
        .description('Display the status and recent events of an allocation')
        .argument('<id>', 'allocation ID or prefix')
        .option('--short', 'show only the most recent task event')
        .option('--stats', 'show detailed resource usage statistics')
        .option('--verbose', 'show full information'),
    ).action(async (id: string, opts: ApiFlags & { short?: boolean; stats?: boolean }) => {
      await runApiCommand(ctx, 'querying allocation', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', id);
        const { body } = await api.get<Allocation>(`/v1/allocation/${encodeURIComponent(allocId)}`);
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        if (opts.short) {
          ctx.stdout.write(`${boldTitles(formatAllocShort(body, Date.now()), styleFor(ctx, opts), ALLOC_STATUS_TITLES)}\n`);
          return ExitCode.Ok;
        }
        let stats: AllocResourceUsage | null = null;
        try {
          stats = (await api.get<AllocResourceUsage>(`/v1/client/allocation/${encodeURIComponent(allocId)}/stats`)).body;
        } catch (err) {
          // A stopped allocation has nothing to measure; for a live one, say why its usage is missing (as Nomad).
          if (!isTerminalClientStatus(body.ClientStatus)) ctx.stderr.write(`Couldn't retrieve stats: ${err instanceof Error ? err.message : String(err)}\n`);
        }
        const text = formatAllocDetail(body, Date.now(), { verbose: opts.verbose ?? false, stats, displayStats: opts.stats ?? false });
        ctx.stdout.write(`${boldTitles(text, styleFor(ctx, opts), ALLOC_STATUS_TITLES)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
