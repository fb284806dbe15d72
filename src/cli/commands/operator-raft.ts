/**
 * `caravan operator raft list-peers`: the servers of the cluster as the leader's peer set shows
 * them (GET /v1/operator/raft/configuration), with which one leads — as Nomad's command.
 * `operator raft remove-peer -peer-address A | -peer-id I` removes a failed server from the
 * peer set; `operator raft transfer-leadership [-peer-address A | -peer-id I]` hands the
 * leadership to that server (routes/operator-raft-peers.ts). Nomad's messages; exit 1 on error.
 */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns } from '../format/columns.js';
import type { RaftServer } from '../../http/routes/operator.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

interface PeerFlags extends ApiFlags {
  peerAddress?: string;
  peerId?: string;
}

/** The peer a command names, as query parameters; null (after Nomad's message) when both or, if `required`, neither are given. */
function peerQuery(ctx: CliContext, opts: PeerFlags, required: boolean): Record<string, string> | null {
  const address = opts.peerAddress ?? '';
  const id = opts.peerId ?? '';
  if (address !== '' && id !== '') {
    ctx.stderr.write('Error parsing arguments: cannot give both -peer-address and -peer-id\n');
    return null;
  }
  if (required && address === '' && id === '') {
    ctx.stderr.write('Error parsing arguments: missing peer id or address\n');
    return null;
  }
  return address !== '' ? { address } : id !== '' ? { id } : {};
}

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
    const peerFlags = (cmd: Command) => addApiFlags(cmd.option('--peer-address <addr>', 'the server\'s address (host:port)').option('--peer-id <id>', 'the server\'s ID'));
    peerFlags(raft.command('remove-peer').description('Remove a failed server from the peer set')).action(async (opts: PeerFlags) => {
      const query = peerQuery(ctx, opts, true);
      if (!query) return void (ctx.exitCode = ExitCode.Error);
      await runApiCommand(ctx, 'removing peer', async () => {
        await apiClient(ctx, opts).delete('/v1/operator/raft/peer', query);
        ctx.stdout.write(query['address'] !== undefined ? `Removed peer with address "${query['address']}"\n` : `Removed peer with id "${query['id']}"\n`);
        return ExitCode.Ok;
      });
    });
    peerFlags(raft.command('transfer-leadership').description('Hand the leadership to another server')).action(async (opts: PeerFlags) => {
      const query = peerQuery(ctx, opts, false);
      if (!query) return void (ctx.exitCode = ExitCode.Error);
      await runApiCommand(ctx, 'transferring leadership to peer', async () => {
        const { body } = await apiClient(ctx, opts).put<{ To: { ID: string; Address: string }; Noop: boolean }>('/v1/operator/raft/transfer-leadership', undefined, query);
        if (opts.json) printJson(ctx, body);
        else if (body.Noop) ctx.stdout.write(`Peer "${body.To.ID}" (${body.To.Address}) is already the leader\n`);
        else ctx.stdout.write(`Transferred leadership to peer "${body.To.ID}" (${body.To.Address})\n`);
        return ExitCode.Ok;
      });
    });
  },
};
