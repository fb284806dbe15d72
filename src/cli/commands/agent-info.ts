/**
 * `caravan agent-info [-json]`: the agent's stats by section (client, nomad, raft, runtime),
 * keys sorted, as Nomad's `agent-info` prints them.
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import type { CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

/** The text of `agent-info`. */
export function formatAgentInfo(stats: Record<string, Record<string, string>>): string {
  const lines: string[] = [];
  for (const section of Object.keys(stats).sort()) {
    lines.push(section);
    const data = stats[section] ?? {};
    for (const key of Object.keys(data).sort()) lines.push(`  ${key} = ${data[key]}`);
  }
  return lines.join('\n');
}

export const agentInfoCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(program.command('agent-info').description("Display the local agent's status and stats")).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying agent info', async () => {
        const { body } = await apiClient(ctx, opts).get<{ stats: Record<string, Record<string, string>> }>('/v1/agent/self');
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatAgentInfo(body.stats ?? {})}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
