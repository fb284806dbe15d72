/**
 * `caravan job periodic force [-detach] JOB`: launches a periodic job's child now, ignoring
 * its schedule and prohibit_overlap, and monitors the child's evaluation like `job run`.
 */
import type { Command } from 'commander';
import type { PeriodicForceResult } from '../../server/periodic/periodic-force.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { short } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { monitorEval } from './eval-monitor.js';
import { resolveJobId } from './job-lookup.js';

interface JobPeriodicForceFlags extends ApiFlags {
  detach?: boolean;
  verbose?: boolean;
}

/** Registers `job periodic force`. */
export const jobPeriodicCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const periodic = commandGroup(program, 'job').command('periodic').description('Interact with periodic jobs');
    addApiFlags(
      periodic
        .command('force')
        .description('Force the launch of a periodic job now')
        .argument('<job>', 'periodic job ID or prefix')
        .option('--detach', 'return after launching, printing the evaluation ID')
        .option('--verbose', 'show full IDs'),
    ).action(async (job: string, opts: JobPeriodicForceFlags) => {
      await runApiCommand(ctx, 'forcing periodic job', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, job);
        const { body } = await api.put<PeriodicForceResult>(`/v1/job/${encodeURIComponent(jobId)}/periodic/force`, {});
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        if (opts.detach || !body.EvalID) {
          ctx.stdout.write(`Job ${body.DispatchedJobID} launched\n`);
          if (body.EvalID) ctx.stdout.write(`Evaluation ID: ${short(body.EvalID, opts.verbose)}\n`);
          return ExitCode.Ok;
        }
        return monitorEval(ctx, api, body.EvalID, opts.verbose);
      });
    });
  },
};
