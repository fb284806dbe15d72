/**
 * `caravan job inspect ID`: prints the job as the API stores it, as `{"Job": …}` JSON
 * (`-version N` for an older version).
 */
import type { Command } from 'commander';
import type { Job } from '../../structs/job.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, PrefixError, runApiCommand, type ApiFlags } from './api-command.js';
import { resolveJobId } from './job-lookup.js';

/** Registers `job inspect`. */
export const jobInspectCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('inspect')
        .description('Print the API JSON of a job')
        .argument('<id>', 'job ID or prefix')
        .option('--version <n>', 'a past version of the job'),
    ).action(async (id: string, opts: ApiFlags & { version?: string }) => {
      await runApiCommand(ctx, 'inspecting job', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, id);
        let job: Job;
        if (opts.version !== undefined) {
          const { body } = await api.get<{ Versions: Job[] }>(`/v1/job/${encodeURIComponent(jobId)}/versions`);
          const found = body.Versions.find((v) => String(v.Version) === opts.version);
          if (!found) throw new PrefixError(`Job "${jobId}" has no version ${opts.version}`);
          job = found;
        } else {
          job = (await api.get<Job>(`/v1/job/${encodeURIComponent(jobId)}`)).body;
        }
        printJson(ctx, opts.json ? job : { Job: job });
        return ExitCode.Ok;
      });
    });
  },
};
