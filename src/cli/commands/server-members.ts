/**
 * `caravan server members`: the servers of the cluster with their address, status, leadership,
 * build, datacenter and region. `server join ADDR…` and `server force-leave [-prune] NODE`, as
 * Nomad's (routes/agent-membership.ts).
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
    const server = commandGroup(program, 'server');
    addApiFlags(server.command('join').description('Join servers to the cluster').argument('<addresses...>', 'server addresses')).action(async (addresses: string[], opts: ApiFlags) => {
      await runApiCommand(ctx, 'joining', async () => {
        const query: Record<string, string> = {};
        const api = apiClient(ctx, opts);
        const url = new URL(api.url('/v1/agent/join', query));
        for (const a of addresses) url.searchParams.append('address', a);
        const { body } = await api.put<{ num_joined: number; error: string }>(`/v1/agent/join?${url.searchParams.toString()}`);
        if (body.error) {
          ctx.stderr.write(`Error joining: ${body.error}\n`);
          return ExitCode.Error;
        }
        ctx.stdout.write(`Joined ${body.num_joined} servers successfully\n`);
        return ExitCode.Ok;
      });
    });
    addApiFlags(server.command('force-leave').description('Force a failed server out of the cluster').option('--prune', 'remove it entirely').argument('<node>', 'the server\'s name')).action(
      async (node: string, opts: ApiFlags & { prune?: boolean }) => {
        await runApiCommand(ctx, `force-leaving server ${node}`, async () => {
          await apiClient(ctx, opts).put('/v1/agent/force-leave', undefined, { node, ...(opts.prune ? { prune: 'true' } : {}) });
          return ExitCode.Ok;
        });
      },
    );
  },
};
