/**
 * `caravan alloc checks ALLOC`: the results of the allocation's Nomad service checks, as
 * `nomad alloc checks` (through /v1/client/allocation/:id/checks).
 */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatKV } from '../format/columns.js';
import { formatTimeMs } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

/** Nomad's CheckQueryResult (the fields shown). */
interface CheckResult {
  ID: string;
  Check: string;
  Group: string;
  Task?: string;
  Service: string;
  Status: string;
  Mode: string;
  Output: string;
  StatusCode?: number;
  Timestamp: number;
}

/** The text of `alloc checks`: one block per check, or a line saying there are none. */
export function formatChecks(allocId: string, checks: Record<string, CheckResult>): string {
  const list = Object.values(checks).sort((a, b) => a.Check.localeCompare(b.Check));
  if (list.length === 0) return `No check results for allocation ${allocId}`;
  const blocks = list.map((c) =>
    formatKV([
      ['ID', c.ID],
      ['Name', c.Check],
      ['Group', c.Group],
      ['Task', c.Task ?? '(group)'],
      ['Service', c.Service],
      ['Status', c.Status],
      ['Mode', c.Mode],
      ['Timestamp', formatTimeMs(c.Timestamp * 1000)],
      ['Output', c.Output],
    ]),
  );
  return `Status of ${list.length} Nomad Service Checks\n\n${blocks.join('\n\n')}`;
}

/** Registers `alloc checks`. */
export const allocChecksCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc').command('checks').description('Show the service check results of an allocation').argument('<alloc>', 'allocation ID or prefix'),
    ).action(async (alloc: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'reading allocation checks', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        const { body } = await api.get<Record<string, CheckResult>>(`/v1/client/allocation/${encodeURIComponent(allocId)}/checks`);
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatChecks(allocId, body ?? {})}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
