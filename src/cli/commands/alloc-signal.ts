/**
 * `caravan alloc signal [-s SIGNAL] [-task T] ALLOC [TASK]`: sends a signal to the tasks of an
 * allocation (SIGKILL unless -s says otherwise), as `nomad alloc signal`.
 */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

interface SignalFlags extends ApiFlags {
  s?: string;
  task?: string;
}

/** Registers `alloc signal`. */
export const allocSignalCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('signal')
        .description('Send a signal to the tasks of an allocation')
        .argument('<alloc>', 'allocation ID or prefix')
        .argument('[task]', 'the task to signal')
        .option('-s <signal>', 'the signal to send (default SIGKILL)')
        .option('--task <name>', 'the task to signal'),
    ).action(async (alloc: string, taskArg: string | undefined, opts: SignalFlags) => {
      await runApiCommand(ctx, 'signalling allocation', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        await api.put(`/v1/client/allocation/${encodeURIComponent(allocId)}/signal`, { Task: taskArg ?? opts.task ?? '', Signal: opts.s ?? '' });
        ctx.stdout.write('Signal sent\n');
        return ExitCode.Ok;
      });
    });
  },
};
