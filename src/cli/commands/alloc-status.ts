/**
 * `caravan alloc status ID`: an allocation's details, then per task its state and its recent
 * events (newest first), as Nomad prints them.
 */
import type { Command } from 'commander';
import type { Allocation, TaskState } from '../../structs/alloc.js';
import { isUnsetTime } from '../../structs/go-time.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV, short } from '../format/columns.js';
import { formatAgo, formatUnixNanos } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

/** The events table of one task, newest first. */
export function formatTaskEvents(state: TaskState): string {
  const rows = [['Time', 'Type', 'Description']];
  for (const e of [...(state.Events ?? [])].reverse()) {
    rows.push([formatUnixNanos(e.Time), e.Type, e.DisplayMessage || e.Message || '']);
  }
  return formatColumns(rows);
}

/** The detail view of one allocation. */
export function formatAllocDetail(a: Allocation, nowMs: number, verbose = false): string {
  const parts = [
    formatKV([
      ['ID', short(a.ID, verbose)],
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
      ['Created', formatAgo(a.CreateTime, nowMs)],
      ['Modified', formatAgo(a.ModifyTime, nowMs)],
    ]),
  ];
  const states = Object.entries(a.TaskStates ?? {}).sort(([x], [y]) => x.localeCompare(y));
  for (const [task, st] of states) {
    parts.push(
      `Task "${task}" is "${st.State}"\n` +
        formatKV([
          ['Started At', isUnsetTime(st.StartedAt) ? 'N/A' : st.StartedAt!],
          ['Finished At', isUnsetTime(st.FinishedAt) ? 'N/A' : st.FinishedAt!],
          ['Total Restarts', String(st.Restarts)],
          ['Last Restart', isUnsetTime(st.LastRestart) ? 'N/A' : st.LastRestart!],
        ]) +
        `\n\nRecent Events:\n${formatTaskEvents(st)}`,
    );
  }
  return parts.join('\n\n');
}

/** Registers `alloc status`. */
export const allocStatusCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('status')
        .description('Display the status and recent events of an allocation')
        .argument('<id>', 'allocation ID or prefix')
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying allocation', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', id);
        const { body } = await api.get<Allocation>(`/v1/allocation/${encodeURIComponent(allocId)}`);
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatAllocDetail(body, Date.now(), opts.verbose)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
