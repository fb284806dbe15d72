/**
 * `caravan alloc stop ALLOC`: stops an allocation so the scheduler replaces it, as
 * `nomad alloc stop -detach` (prints the evaluation ID).
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
        .option('--detach', 'return immediately (the only mode for now)'),
    ).action(async (alloc: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'stopping allocation', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        const { body } = await api.put<{ EvalID: string; Index: number }>(`/v1/allocation/${encodeURIComponent(allocId)}/stop`);
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${body.EvalID}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
