/**
 * `caravan node drain -enable|-disable [-deadline 1h|-no-deadline|-force] [-ignore-system]
 * [-keep-ineligible] [-m message] [-yes] [-detach] NODE` — Nomad's node drain. Enabling
 * monitors the drain until the node is done and its allocations have stopped (Ctrl-C stops
 * watching, not the drain), printing what happens to each allocation as `nomad node drain` does.
 */
import type { Command } from 'commander';
import { askLine, canAsk } from '../terminal-prompt.js';
import { parseDuration } from '../../structs/duration.js';
import type { Allocation, Node } from '../../structs/index.js';
import { isTerminalClientStatus } from '../../structs/index.js';
import type { ApiClient } from '../api-client.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { formatTimeMs } from '../format/time-format.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';

interface DrainFlags extends ApiFlags {
  enable?: boolean;
  disable?: boolean;
  deadline?: string;
  noDeadline?: boolean;
  force?: boolean;
  ignoreSystem?: boolean;
  keepIneligible?: boolean;
  m?: string;
  yes?: boolean;
  detach?: boolean;
  monitor?: boolean;
}

/** What the monitor remembers of an allocation between two looks. */
interface SeenAlloc {
  migrate: boolean;
  desired: string;
  client: string;
}

/**
 * The monitor lines for the change from `before` to `now` of a node's allocations (pure).
 * Updates `before` in place.
 */
export function drainAllocLines(before: Map<string, SeenAlloc>, now: Allocation[]): string[] {
  const lines: string[] = [];
  for (const a of now) {
    const prev = before.get(a.ID);
    const cur: SeenAlloc = { migrate: a.DesiredTransition?.Migrate === true, desired: a.DesiredStatus, client: a.ClientStatus };
    before.set(a.ID, cur);
    if (!prev) continue;
    if (cur.migrate && !prev.migrate) lines.push(`Alloc "${a.ID}" marked for migration`);
    if (cur.desired !== prev.desired && cur.desired !== 'run') lines.push(`Alloc "${a.ID}" draining`);
    if (cur.client !== prev.client && cur.desired !== 'run') lines.push(`Alloc "${a.ID}" status ${prev.client} -> ${cur.client}`);
  }
  return lines;
}

function stamp(ctx: CliContext, line: string): void {
  ctx.stdout.write(`${formatTimeMs(Date.now())}: ${line}\n`);
}

/** Asks for confirmation on a terminal; anything but y/yes declines. Without a terminal: yes. */
async function confirm(question: string): Promise<boolean> {
  if (!canAsk()) return true;
  const answer = (await askLine(`${question} [y/N]`))?.trim().toLowerCase();
  return answer === 'y' || answer === 'yes';
}

/** Follows the drain of `nodeId` until it is complete and the node's allocations stopped. */
async function monitorDrain(ctx: CliContext, api: ApiClient, nodeId: string, ignoreSystem: boolean): Promise<number> {
  stamp(ctx, 'Ctrl-C to stop monitoring: will not cancel the node drain');
  const seen = new Map<string, SeenAlloc>();
  let allocIndex = 0;
  let drainDone = false;
  for (;;) {
    const { body: allocs, index } = await api.get<Allocation[]>(`/v1/node/${encodeURIComponent(nodeId)}/allocations`, { index: allocIndex, wait: '1s' });
    allocIndex = index;
    for (const line of drainAllocLines(seen, allocs)) stamp(ctx, line);
    const { body: node } = await api.get<Node>(`/v1/node/${encodeURIComponent(nodeId)}`);
    if (!drainDone && !node.DrainStrategy) {
      drainDone = true;
      const status = (node.LastDrain as { Status?: string } | null)?.Status;
      if (status === 'canceled') {
        stamp(ctx, `Drain for node "${nodeId}" was canceled`);
        return ExitCode.Ok;
      }
      stamp(ctx, `Drain complete for node ${nodeId}`);
    }
    if (drainDone) {
      const running = allocs.filter((a) => !isTerminalClientStatus(a.ClientStatus) && !(ignoreSystem && (a.Job?.Type === 'system' || a.Job?.Type === 'sysbatch')));
      if (running.length === 0) {
        stamp(ctx, `All allocations on node "${nodeId}" have stopped`);
        return ExitCode.Ok;
      }
    }
  }
}

/** Registers `node drain`. */
export const nodeDrainCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const group = commandGroup(program, 'node');
    addApiFlags(
      group
        .command('drain')
        .description('Toggle drain mode on a node: migrate its allocations away')
        .argument('<node>', 'node ID or prefix')
        .option('--enable', 'enable draining')
        .option('--disable', 'disable draining')
        .option('--deadline <duration>', 'force the remaining allocations off after this long', '1h')
        .option('--no-deadline', 'no deadline: wait for allocations to migrate however long it takes')
        .option('--force', 'migrate every allocation at once')
        .option('--ignore-system', 'leave system jobs running')
        .option('--keep-ineligible', 'with -disable: keep the node ineligible')
        .option('-m <message>', 'a message recorded with the drain (Meta.message)')
        .option('--yes', 'do not ask for confirmation')
        .option('--detach', 'return once the drain is set, without monitoring')
        .option('--monitor', 'only monitor an existing drain'),
    ).action(async (id: string, opts: DrainFlags) => {
      const modes = [opts.enable, opts.disable, opts.monitor].filter(Boolean).length;
      if (modes !== 1) throw new CliUsageError('exactly one of -enable, -disable and -monitor is required');
      // commander's --no-deadline turns `deadline` into false rather than setting noDeadline.
      const noDeadline = (opts.deadline as unknown) === false || opts.noDeadline === true;
      let deadline = 0;
      if (opts.force) deadline = -1;
      else if (!noDeadline) {
        try {
          deadline = parseDuration(opts.deadline ?? '1h');
        } catch {
          throw new CliUsageError(`-deadline: invalid duration ${JSON.stringify(opts.deadline)}`);
        }
        if (deadline <= 0) throw new CliUsageError('-deadline: must be positive (use -force or -no-deadline)');
      }
      await runApiCommand(ctx, 'updating the node drain', async () => {
        const api = apiClient(ctx, opts);
        const nodeId = await resolveIdPrefix(api, '/v1/nodes', 'node', id);
        if (opts.monitor) return monitorDrain(ctx, api, nodeId, Boolean(opts.ignoreSystem));
        if (!opts.yes && !opts.json) {
          const verb = opts.enable ? 'enable' : 'disable';
          if (!(await confirm(`Are you sure you want to ${verb} drain mode for node "${nodeId}"?`))) {
            ctx.stdout.write('Canceling drain toggle\n');
            return ExitCode.Ok;
          }
        }
        const meta = opts.m !== undefined ? { message: opts.m } : null;
        const body = opts.enable
          ? { DrainSpec: { Deadline: deadline, IgnoreSystemJobs: Boolean(opts.ignoreSystem) }, MarkEligible: false, Meta: meta }
          : { DrainSpec: null, MarkEligible: !opts.keepIneligible, Meta: meta };
        const { body: res } = await api.put<unknown>(`/v1/node/${encodeURIComponent(nodeId)}/drain`, body);
        if (opts.json) {
          printJson(ctx, res);
          return ExitCode.Ok;
        }
        if (opts.disable) {
          ctx.stdout.write(`Node "${nodeId}" drain strategy unset\n`);
          return ExitCode.Ok;
        }
        stamp(ctx, `Node "${nodeId}" drain strategy set`);
        if (opts.detach) return ExitCode.Ok;
        return monitorDrain(ctx, api, nodeId, Boolean(opts.ignoreSystem));
      });
    });
  },
};
