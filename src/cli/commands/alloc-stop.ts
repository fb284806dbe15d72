/**
 * `caravan alloc stop ALLOC`: stops an allocation so the scheduler replaces it, as
 * `nomad alloc stop -detach` (prints the evaluation ID); `-no-shutdown-delay` kills its tasks
 * without waiting their shutdown_delay.
 */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

/** Registers `alloc stop`. */
export const allocStopCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('stop')
        .description('Stop and reschedule a running allocation')
        .argument('<alloc>', 'allocation ID or prefix')
        .option('--detach', 'return immediately (the only mode for now)')
        .option('--no-shutdown-delay', "ignore the tasks' shutdown_delay"),
    ).action(async (alloc: string, opts: ApiFlags & { shutdownDelay: boolean }) => {
      await runApiCommand(ctx, 'stopping allocation', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        const query = opts.shutdownDelay ? {} : { no_shutdown_delay: 'true' };
        const { body } = await api.put<{ EvalID: string; Index: number }>(`/v1/allocation/${encodeURIComponent(allocId)}/stop`, undefined, query);
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${body.EvalID}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
