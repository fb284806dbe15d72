/**
 * `caravan node status [ID]` (all nodes, or one node's details and allocations) and
 * `caravan node eligibility -enable|-disable ID`.
 */
import type { Command } from 'commander';
import type { Allocation, Node, NodeListStub } from '../../structs/index.js';
import { allocStub } from '../../structs/alloc.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV, short } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import { formatAllocTable } from './job-status.js';

/** The table of `node status` without an ID. */
export function formatNodeList(nodes: NodeListStub[], verbose = false): string {
  if (nodes.length === 0) return 'No nodes registered';
  const rows = [['ID', 'Node Pool', 'DC', 'Name', 'Class', 'Drain', 'Eligibility', 'Status']];
  for (const n of nodes) rows.push([short(n.ID, verbose), n.NodePool, n.Datacenter, n.Name, n.NodeClass || '<none>', String(n.Drain), n.SchedulingEligibility, n.Status]);
  return formatColumns(rows);
}

/** The detail view of one node. */
export function formatNodeDetail(n: Node, allocs: Allocation[], nowMs: number, verbose = false): string {
  const kv = formatKV([
    ['ID', short(n.ID, verbose)],
    ['Name', n.Name],
    ['Node Pool', n.NodePool],
    ['Class', n.NodeClass || '<none>'],
    ['DC', n.Datacenter],
    ['Drain', String(n.Drain)],
    ['Eligibility', n.SchedulingEligibility],
    ['Status', n.Status],
    ['HTTP Addr', n.HTTPAddr],
    ['Host Volumes', Object.keys(n.HostVolumes ?? {}).sort().join(',') || '<none>'],
    ['Drivers', Object.keys(n.Drivers ?? {}).filter((d) => n.Drivers[d]!.Detected).sort().join(',')],
  ]);
  return `${kv}\n\nAllocations\n${formatAllocTable(allocs.map(allocStub), nowMs, verbose)}`;
}

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
        if (opts.json) printJson(ctx, node);
        else ctx.stdout.write(`${formatNodeDetail(node, allocs, Date.now(), opts.verbose)}\n`);
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
