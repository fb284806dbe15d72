/**
 * `caravan eval delete [-filter EXPR] [-yes] [EVAL_ID]`: deletes evaluations while the eval broker
 * is paused, as `nomad eval delete` (DELETE /v1/evaluations, by ID or by filter).
 */
import type { Command } from 'commander';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

/** Registers `eval delete`. */
export const evalDeleteCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'eval')
        .command('delete')
        .description('Delete evaluations (the eval broker must be paused)')
        .argument('[id]', 'evaluation ID or prefix')
        .option('--filter <expr>', 'delete every evaluation matching this filter expression')
        .option('--yes', 'do not ask for confirmation (accepted for compatibility)'),
    ).action(async (id: string | undefined, opts: ApiFlags & { filter?: string }) => {
      if ((id === undefined) === (opts.filter === undefined)) throw new CliUsageError('give either an evaluation ID or -filter, not both');
      await runApiCommand(ctx, 'deleting evaluations', async () => {
        const api = apiClient(ctx, opts);
        const body = id !== undefined ? { EvalIDs: [await resolveIdPrefix(api, '/v1/evaluations', 'evaluation', id)] } : { Filter: opts.filter };
        const res = await api.request<{ Count: number }>('DELETE', '/v1/evaluations', {}, body);
        if (opts.json) printJson(ctx, res.body);
        else ctx.stdout.write(`Successfully deleted ${res.body.Count} ${res.body.Count === 1 ? 'evaluation' : 'evaluations'}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
