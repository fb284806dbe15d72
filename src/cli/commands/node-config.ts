/**
 * `caravan node config -servers` lists the servers the local client talks to;
 * `caravan node config -update-servers ADDR...` replaces them at run time, as Nomad's
 * `node config` does (GET/PUT /v1/agent/servers on the client's agent).
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { CliUsageError, ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

export const nodeConfigCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'node')
        .command('config')
        .description("Show or change the local client's configuration (its server list)")
        .argument('[addresses...]', 'with -update-servers: the new servers (host:port)')
        .option('--servers', 'list the servers the client talks to')
        .option('--update-servers', 'replace the servers with the addresses given'),
    ).action(async (addresses: string[], opts: ApiFlags & { servers?: boolean; updateServers?: boolean }) => {
      if (opts.servers === opts.updateServers) throw new CliUsageError('give exactly one of -servers or -update-servers');
      if (opts.updateServers && addresses.length === 0) throw new CliUsageError('-update-servers needs at least one server address');
      if (opts.servers && addresses.length > 0) throw new CliUsageError('-servers takes no arguments');
      await runApiCommand(ctx, opts.servers ? 'querying server list' : 'updating server list', async () => {
        const api = apiClient(ctx, opts);
        if (opts.updateServers) {
          await api.put('/v1/agent/servers' + '?' + addresses.map((a) => `address=${encodeURIComponent(a)}`).join('&'));
          return ExitCode.Ok;
        }
        const { body } = await api.get<string[]>('/v1/agent/servers');
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(body.map((s) => `${s}\n`).join(''));
        return ExitCode.Ok;
      });
    });
  },
};
