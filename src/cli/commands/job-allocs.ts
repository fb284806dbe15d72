/**
 * `caravan job allocs [-all] [-verbose] [-json] JOB`: the allocations of a job, as Nomad's
 * `job allocs` lists them.
 */
import type { Command } from 'commander';
import type { AllocListStub } from '../../structs/alloc.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { resolveJobId } from './job-lookup.js';
import { formatAllocTable } from './job-status.js';

export const jobAllocsCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('allocs')
        .description('List the allocations of a job')
        .argument('<job>', 'job ID or prefix')
        .option('--all', 'also the allocations of an earlier job with the same ID')
        .option('--verbose', 'show full IDs'),
    ).action(async (prefix: string, opts: ApiFlags & { all?: boolean }) => {
      await runApiCommand(ctx, 'retrieving allocations', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, prefix);
        const { body } = await api.get<AllocListStub[]>(`/v1/job/${encodeURIComponent(jobId)}/allocations`, opts.all ? { all: 'true' } : {});
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatAllocTable(body, Date.now(), opts.verbose)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
