/**
 * `caravan operator metrics [-format prometheus] [-pretty] [-json]`: the agent's metrics, as
 * Nomad's `operator metrics`: the JSON summary (indented with -pretty), or Prometheus text.
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { CliUsageError, ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, runApiCommand, type ApiFlags } from './api-command.js';

export const operatorMetricsCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'operator')
        .command('metrics')
        .description("Show the agent's metrics")
        .option('--format <format>', 'json (default) or prometheus')
        .option('--pretty', 'indent the JSON'),
    ).action(async (opts: ApiFlags & { format?: string; pretty?: boolean }) => {
      const format = opts.format ?? 'json';
      if (format !== 'json' && format !== 'prometheus') throw new CliUsageError(`invalid -format "${format}": want json or prometheus`);
      await runApiCommand(ctx, 'querying metrics', async () => {
        const api = apiClient(ctx, opts);
        const res = await api.fetchRaw('GET', '/v1/metrics', format === 'prometheus' ? { format } : {});
        const text = await res.text();
        if (format === 'prometheus') ctx.stdout.write(text);
        else ctx.stdout.write(`${opts.pretty || opts.json ? JSON.stringify(JSON.parse(text) as unknown, null, 4) : text}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
