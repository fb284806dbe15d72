/**
 * `caravan operator raft list-peers`: the servers of the cluster as the leader's peer set shows
 * them (GET /v1/operator/raft/configuration), with which one leads — as Nomad's command.
 */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns } from '../format/columns.js';
import type { RaftServer } from '../../http/routes/operator.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

/** Registers `operator raft list-peers`. */
export const operatorRaftCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const raft = commandGroup(program, 'operator').command('raft').description('Inspect the servers\' peer set');
    addApiFlags(raft.command('list-peers').description('Display the current peer set of the servers')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying the peer set', async () => {
        const { body } = await apiClient(ctx, opts).get<{ Servers: RaftServer[] }>('/v1/operator/raft/configuration');
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        const rows = [['Node', 'ID', 'Address', 'State', 'Voter', 'RaftProtocol']];
        for (const s of body.Servers) rows.push([s.Node, s.ID, s.Address, s.Leader ? 'leader' : 'follower', String(s.Voter), s.RaftProtocol]);
        ctx.stdout.write(`${formatColumns(rows)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
