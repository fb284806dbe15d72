/**
 * `caravan job history ID`: every stored version of a job, newest first.
 */
import type { Command } from 'commander';
import type { Job } from '../../structs/job.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatKV } from '../format/columns.js';
import { formatUnixNanos } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { resolveJobId } from './job-lookup.js';

/** The text of `job history`: one "Version = …" block per version. */
export function formatJobHistory(versions: Job[]): string {
  return versions
    .map((v) => formatKV([['Version', String(v.Version)], ['Stable', String(v.Stable)], ['Submit Date', formatUnixNanos(v.SubmitTime)]]))
    .join('\n\n');
}

/** Registers `job history`. */
export const jobHistoryCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('history')
        .description('Display the versions of a job')
        .argument('<id>', 'job ID or prefix'),
    ).action(async (id: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'retrieving job versions', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, id);
        const { body } = await api.get<{ Versions: Job[] }>(`/v1/job/${encodeURIComponent(jobId)}/versions`);
        if (opts.json) printJson(ctx, body.Versions);
        else ctx.stdout.write(`${formatJobHistory(body.Versions)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
