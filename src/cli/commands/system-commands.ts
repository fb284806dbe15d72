/** `caravan system gc` and `caravan system reconcile summaries`: the /v1/system writes. */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, runApiCommand, type ApiFlags } from './api-command.js';

/** Registers the `system` commands. */
export const systemCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const system = commandGroup(program, 'system');
    addApiFlags(system.command('gc').description('Run the garbage collector now')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'running system garbage-collection', async () => {
        await apiClient(ctx, opts).put('/v1/system/gc');
        return ExitCode.Ok;
      });
    });
    const reconcile = system.command('reconcile').description('Reconcile system state');
    addApiFlags(reconcile.command('summaries').description('Recompute job summaries from the allocations')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'reconciling job summaries', async () => {
        await apiClient(ctx, opts).put('/v1/system/reconcile/summaries');
        return ExitCode.Ok;
      });
    });
  },
};
