/** `caravan job scaling-events [-verbose] JOB`: a job's scaling events, newest first per group. */
import type { Command } from 'commander';
import type { ScalingEvent } from '../../server/state/job-scaling-events.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, short } from '../format/columns.js';
import { formatUnixNanos } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { resolveJobId } from './job-lookup.js';

/** Registers `job scaling-events`. */
export const jobScalingEventsCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('scaling-events')
        .description("Show a job's scaling events")
        .argument('<job>', 'job ID or prefix')
        .option('--verbose', 'show messages, errors and evaluation IDs'),
    ).action(async (id: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'listing scaling events', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, id);
        const { body } = await api.get<{ TaskGroups: Record<string, { Events: ScalingEvent[] | null }> }>(`/v1/job/${encodeURIComponent(jobId)}/scale`);
        if (opts.json) {
          printJson(ctx, body.TaskGroups);
          return ExitCode.Ok;
        }
        const rows: string[][] = [opts.verbose ? ['Task Group', 'Count', 'PrevCount', 'Error', 'Date', 'EvalID', 'Message'] : ['Task Group', 'Count', 'PrevCount', 'Date']];
        for (const [group, s] of Object.entries(body.TaskGroups)) {
          for (const ev of s.Events ?? []) {
            const date = formatUnixNanos(ev.Time);
            const count = ev.Count === null ? '' : String(ev.Count);
            rows.push(opts.verbose ? [group, count, String(ev.PreviousCount), String(ev.Error), date, ev.EvalID ? short(ev.EvalID, true) : '', ev.Message] : [group, count, String(ev.PreviousCount), date]);
          }
        }
        if (rows.length === 1) {
          ctx.stdout.write('No events found\n');
          return ExitCode.Ok;
        }
        ctx.stdout.write(`${formatColumns(rows)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
