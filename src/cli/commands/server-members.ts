/**
 * `caravan server members`: the servers of the cluster with their address, status, leadership,
 * build, datacenter and region.
 */
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

interface Member {
  Name: string;
  Addr: string;
  Port: number;
  Status: string;
  Tags: Record<string, string>;
}

/** Registers `server members`. */
export const serverMembersCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(commandGroup(program, 'server').command('members').description('Display the servers of the cluster')).action(
      async (opts: ApiFlags) => {
        await runApiCommand(ctx, 'querying servers', async () => {
          const api = apiClient(ctx, opts);
          const { body } = await api.get<{ Members: Member[] }>('/v1/agent/members');
          if (opts.json) {
            printJson(ctx, body);
            return ExitCode.Ok;
          }
          const leader = (await api.get<string>('/v1/status/leader')).body;
          const rows = [['Name', 'Address', 'Port', 'Status', 'Leader', 'Raft Version', 'Build', 'Datacenter', 'Region']];
          for (const m of body.Members) {
            const isLeader = leader === `${m.Tags['rpc_addr'] ?? m.Addr}:${m.Tags['port'] ?? ''}`;
            rows.push([m.Name, m.Addr, String(m.Port), m.Status, String(isLeader), m.Tags['raft_vsn'] ?? '', m.Tags['build'] ?? '', m.Tags['dc'] ?? '', m.Tags['region'] ?? '']);
          }
          ctx.stdout.write(`${formatColumns(rows)}\n`);
          return ExitCode.Ok;
        });
      },
    );
  },
};
