/**
 * `caravan job eval [-force-reschedule] [-detach] [-verbose] JOB`: asks the scheduler to
 * evaluate a job again (after a node came back, say) and follows that evaluation, as Nomad's
 * `job eval` does; `-force-reschedule` also replaces failed allocations whose reschedule
 * policy would otherwise wait or give up.
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { short } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { monitorEval } from './eval-monitor.js';
import { resolveJobId } from './job-lookup.js';

export const jobEvalCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('eval')
        .description('Force a new evaluation of a job')
        .argument('<job>', 'job ID or prefix')
        .option('--force-reschedule', 'reschedule failed allocations even if their reschedule policy would not')
        .option('--detach', 'return at once, printing the evaluation ID')
        .option('--verbose', 'show full IDs'),
    ).action(async (prefix: string, opts: ApiFlags & { forceReschedule?: boolean; detach?: boolean }) => {
      await runApiCommand(ctx, 'evaluating job', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, prefix);
        const { body } = await api.put<{ EvalID: string }>(`/v1/job/${encodeURIComponent(jobId)}/evaluate`, {
          JobID: jobId,
          EvalOptions: { ForceReschedule: opts.forceReschedule === true },
        });
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        if (opts.detach) {
          ctx.stdout.write(`Created eval ID: "${short(body.EvalID, opts.verbose)}" \n`);
          return ExitCode.Ok;
        }
        return monitorEval(ctx, api, body.EvalID, opts.verbose);
      });
    });
  },
};
