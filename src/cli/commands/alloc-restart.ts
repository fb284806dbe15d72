/**
 * `caravan alloc restart [-task T | -all-tasks] ALLOC [TASK]`: restarts the tasks of a running
 * allocation in place, as `nomad alloc restart`.
 */
import type { Command } from 'commander';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

interface RestartFlags extends ApiFlags {
  task?: string;
  allTasks?: boolean;
}

/** Registers `alloc restart`. */
export const allocRestartCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('restart')
        .description("Restart a running allocation's tasks")
        .argument('<alloc>', 'allocation ID or prefix')
        .argument('[task]', 'the task to restart')
        .option('--task <name>', 'the task to restart')
        .option('--all-tasks', 'restart every task, including those already finished'),
    ).action(async (alloc: string, taskArg: string | undefined, opts: RestartFlags) => {
      await runApiCommand(ctx, 'restarting allocation', async () => {
        const task = taskArg ?? opts.task ?? '';
        if (task !== '' && opts.allTasks) throw new CliUsageError('-task and -all-tasks cannot be used together');
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        await api.put(`/v1/client/allocation/${encodeURIComponent(allocId)}/restart`, { TaskName: task, AllTasks: opts.allTasks === true });
        ctx.stdout.write('Allocation restarted\n');
        return ExitCode.Ok;
      });
    });
  },
};
