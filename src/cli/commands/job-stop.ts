/**
 * `caravan job stop [-purge] [-detach] [-no-shutdown-delay] ID`: deregisters a job (or purges
 * it) and monitors the resulting evaluation.
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { monitorEval } from './eval-monitor.js';
import { resolveJobId } from './job-lookup.js';

interface JobStopFlags extends ApiFlags {
  purge?: boolean;
  detach?: boolean;
  /** False with -no-shutdown-delay (commander's negated flag). */
  shutdownDelay: boolean;
}

/** Registers `job stop`. */
export const jobStopCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('stop')
        .description('Stop a running job')
        .argument('<id>', 'job ID or prefix')
        .option('--purge', 'remove the job from the state entirely')
        .option('--detach', 'return after submitting, printing the evaluation ID')
        .option('--no-shutdown-delay', "ignore the tasks' shutdown_delay")
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string, opts: JobStopFlags) => {
      await runApiCommand(ctx, 'deregistering job', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, id);
        const { body } = await api.delete<{ EvalID: string }>(`/v1/job/${encodeURIComponent(jobId)}`, {
          purge: opts.purge ? true : undefined,
          no_shutdown_delay: opts.shutdownDelay ? undefined : true,
        });
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        if (opts.detach || !body.EvalID) {
          ctx.stdout.write(`${body.EvalID}\n`);
          return ExitCode.Ok;
        }
        return monitorEval(ctx, api, body.EvalID, opts.verbose);
      });
    });
  },
};
