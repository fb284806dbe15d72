/**
 * `caravan node intro create [-ttl D] [-node-name N] [-node-pool P] [-json]`, as Nomad's
 * `nomad node intro create`: mints a client introduction token through
 * PUT /v1/acl/identity/client-introduction-token (node:write) and prints it, or the API's
 * `{"JWT": …}` with -json. A new client presents the token when it first registers.
 */
import type { Command } from 'commander';
import { DurationParseError, parseDuration } from '../../structs/duration.js';
import type { ClientIntroductionTokenResponse } from '../../structs/client-introduction.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

interface IntroCreateFlags extends ApiFlags {
  ttl?: string;
  nodeName?: string;
  nodePool?: string;
}

/** The request body of the flags; -ttl is checked here, so a bad one never reaches the server. */
export function introRequestBody(opts: IntroCreateFlags): Record<string, unknown> {
  let ttl = 0;
  if (opts.ttl !== undefined && opts.ttl !== '') {
    try {
      ttl = parseDuration(opts.ttl);
    } catch (err) {
      if (err instanceof DurationParseError) throw new CliUsageError(`Error parsing TTL: invalid duration ${JSON.stringify(opts.ttl)} (want e.g. 15m)`);
      throw err;
    }
    if (ttl < 0) throw new CliUsageError(`Error parsing TTL: ${JSON.stringify(opts.ttl)} is negative`);
  }
  return { NodeName: opts.nodeName ?? '', NodePool: opts.nodePool ?? '', TTL: ttl };
}

/** Registers `node intro create`. */
export const nodeIntroCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const intro = commandGroup(program, 'node').command('intro').description('Manage node introduction tokens');
    addApiFlags(
      intro
        .command('create')
        .description('Generate a new node introduction token')
        .option('--ttl <duration>', 'the TTL of the token (default: the server\'s default_identity_ttl)')
        .option('--node-name <name>', 'the name of the node the token is scoped to (default: any)')
        .option('--node-pool <pool>', 'the node pool the token is scoped to (default "default")'),
    ).action(async (opts: IntroCreateFlags) => {
      const body = introRequestBody(opts);
      await runApiCommand(ctx, 'generating introduction token', async () => {
        const { body: res } = await apiClient(ctx, opts).put<ClientIntroductionTokenResponse>('/v1/acl/identity/client-introduction-token', body);
        if (opts.json) printJson(ctx, res);
        else ctx.stdout.write(`Successfully generated client introduction token:\n\n${res.JWT}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
