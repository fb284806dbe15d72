/**
 * `caravan node meta read [-node-id ID]` and `caravan node meta apply [-node-id ID] [-unset k1,k2]
 * key=value…`: a node's dynamic metadata, as Nomad's commands (through /v1/client/metadata; the
 * agent asked answers for its own client when no node is named).
 */
import type { Command } from 'commander';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatKV } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

interface NodeMetaResponse {
  Meta: Record<string, string>;
  Dynamic: Record<string, string | null>;
  Static: Record<string, string>;
}

type MetaFlags = ApiFlags & { nodeId?: string; unset?: string };

/** The `key=value` arguments and `-unset` keys as a NodeMetaApplyRequest's Meta (null unsets). */
export function metaChanges(pairs: string[], unset: string | undefined): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new CliUsageError(`invalid metadata ${JSON.stringify(p)}: want key=value`);
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  for (const k of (unset ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')) out[k] = null;
  if (Object.keys(out).length === 0) throw new CliUsageError('nothing to apply: give key=value pairs or -unset keys');
  return out;
}

function formatMeta(meta: Record<string, string>): string {
  const keys = Object.keys(meta).sort();
  return keys.length === 0 ? '<none>' : formatKV(keys.map((k) => [k, meta[k]!]));
}

/** Registers `node meta read` and `node meta apply`. */
export const nodeMetaCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const meta = commandGroup(program, 'node').command('meta').description('Read and apply a node\'s dynamic metadata');
    const nodeIdOf = async (api: ReturnType<typeof apiClient>, raw: string | undefined) =>
      raw ? resolveIdPrefix(api, '/v1/nodes', 'node', raw) : '';
    addApiFlags(
      meta.command('read').description('Read the metadata of a node').option('--node-id <id>', 'the node (default: the agent asked)'),
    ).action(async (opts: MetaFlags) => {
      await runApiCommand(ctx, 'reading node metadata', async () => {
        const api = apiClient(ctx, opts);
        const nodeId = await nodeIdOf(api, opts.nodeId);
        const { body } = await api.get<NodeMetaResponse>('/v1/client/metadata', nodeId ? { node_id: nodeId } : {});
        if (opts.json) printJson(ctx, body);
        else {
          const dynamic = Object.fromEntries(Object.entries(body.Dynamic).map(([k, v]) => [k, v ?? '<unset>']));
          ctx.stdout.write(`All Meta\n${formatMeta(body.Meta)}\n\nDynamic Meta\n${formatMeta(dynamic)}\n\nStatic Meta\n${formatMeta(body.Static)}\n`);
        }
        return ExitCode.Ok;
      });
    });
    addApiFlags(
      meta
        .command('apply')
        .description('Set or unset dynamic metadata of a node')
        .argument('[pairs...]', 'key=value pairs to set')
        .option('--node-id <id>', 'the node (default: the agent asked)')
        .option('--unset <keys>', 'comma-separated keys to unset'),
    ).action(async (pairs: string[], opts: MetaFlags) => {
      const changes = metaChanges(pairs, opts.unset);
      await runApiCommand(ctx, 'applying node metadata', async () => {
        const api = apiClient(ctx, opts);
        const nodeId = await nodeIdOf(api, opts.nodeId);
        const { body } = await api.post<NodeMetaResponse>('/v1/client/metadata', { NodeID: nodeId, Meta: changes });
        if (opts.json) printJson(ctx, body);
        return ExitCode.Ok;
      });
    });
  },
};
