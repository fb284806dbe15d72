/**
 * `caravan node status [ID]` (all nodes, or one node's details and allocations) and
 * `caravan node eligibility -enable|-disable ID`.
 */
import type { Command } from 'commander';
import type { Allocation, Node, NodeListStub } from '../../structs/index.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import type { HostStats } from '../../client/node/host-stats.js';
import type { AllocResourceUsage } from '../../http/routes/client-alloc.js';
import type { ApiClient } from '../api-client.js';
import { boldTitles, styleFor } from '../format/colorize.js';
import { formatColumns, short } from '../format/columns.js';
import { formatNodeDetail, type NodeDetailStats } from '../format/node-detail.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

/** The table of `node status` without an ID. */
export function formatNodeList(nodes: NodeListStub[], verbose = false): string {
  if (nodes.length === 0) return 'No nodes registered';
  const rows = [['ID', 'Node Pool', 'DC', 'Name', 'Class', 'Drain', 'Eligibility', 'Status']];
  for (const n of nodes) rows.push([short(n.ID, verbose), n.NodePool, n.Datacenter, n.Name, n.NodeClass || '<none>', String(n.Drain), n.SchedulingEligibility, n.Status]);
  return formatColumns(rows);
}

/**
 * What the node's client says of its host and of its running allocations; a node that is down
 * answers nothing (said once on stderr, as Nomad says it), an allocation that cannot be read
 * leaves out the allocations' utilization.
 */
async function nodeStats(ctx: CliContext, api: ApiClient, node: Node, allocs: Allocation[]): Promise<NodeDetailStats> {
  if (node.Status === 'down') return { host: null, allocs: null };
  let host: HostStats | null = null;
  try {
    host = (await api.get<HostStats>('/v1/client/stats', { node_id: node.ID })).body;
  } catch (err) {
    ctx.stderr.write(`error fetching node stats: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  const running = allocs.filter((a) => a.ClientStatus === 'running');
  const usages = await Promise.all(running.map((a) => api.get<AllocResourceUsage>(`/v1/client/allocation/${encodeURIComponent(a.ID)}/stats`).then((r) => r.body, () => null)));
  return { host, allocs: usages.every((u) => u !== null) ? (usages as AllocResourceUsage[]) : null };
}

/** The section titles `node status <id>` bolds on a terminal, as Nomad. */
const NODE_STATUS_TITLES = ['Node Events', 'Allocated Resources', 'Allocation Resource Utilization', 'Host Resource Utilization', 'Allocations'];

/** Registers `node status` and `node eligibility`. */
export const nodeCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const group = commandGroup(program, 'node');
    addApiFlags(
      group
        .command('status')
        .description('Display the status of client nodes')
        .argument('[id]', 'node ID or prefix')
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string | undefined, opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying node status', async () => {
        const api = apiClient(ctx, opts);
        if (id === undefined) {
          const { body } = await api.get<NodeListStub[]>('/v1/nodes');
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`${formatNodeList(body, opts.verbose)}\n`);
          return ExitCode.Ok;
        }
        const nodeId = await resolveIdPrefix(api, '/v1/nodes', 'node', id);
        const [{ body: node }, { body: allocs }] = await Promise.all([
          api.get<Node>(`/v1/node/${encodeURIComponent(nodeId)}`),
          api.get<Allocation[]>(`/v1/node/${encodeURIComponent(nodeId)}/allocations`),
        ]);
        if (opts.json) {
          printJson(ctx, node);
          return ExitCode.Ok;
        }
        const text = formatNodeDetail(node, allocs, Date.now(), opts.verbose, await nodeStats(ctx, api, node, allocs));
        ctx.stdout.write(`${boldTitles(text, styleFor(ctx, opts), NODE_STATUS_TITLES)}\n`);
        return ExitCode.Ok;
      });
    });
    addApiFlags(
      group
        .command('eligibility')
        .description('Toggle whether new allocations may be placed on a node')
        .argument('<id>', 'node ID or prefix')
        .option('--enable', 'mark the node eligible')
        .option('--disable', 'mark the node ineligible'),
    ).action(async (id: string, opts: ApiFlags & { enable?: boolean; disable?: boolean }) => {
      if (Boolean(opts.enable) === Boolean(opts.disable)) throw new CliUsageError('exactly one of -enable and -disable is required');
      await runApiCommand(ctx, 'updating scheduling eligibility', async () => {
        const api = apiClient(ctx, opts);
        const nodeId = await resolveIdPrefix(api, '/v1/nodes', 'node', id);
        const eligibility = opts.enable ? 'eligible' : 'ineligible';
        const { body } = await api.put<unknown>(`/v1/node/${encodeURIComponent(nodeId)}/eligibility`, { NodeID: nodeId, Eligibility: eligibility });
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`Node "${nodeId}" scheduling eligibility set: ${eligibility} for scheduling\n`);
        return ExitCode.Ok;
      });
    });
  },
};
