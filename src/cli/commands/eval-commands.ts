/**
 * `caravan eval status ID` (details of one evaluation, placement failures, `-monitor`) and
 * `caravan eval list` (recent evaluations, `-job`, `-status` filters).
 */
import type { Command } from 'commander';
import type { Evaluation } from '../../structs/eval.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV, short } from '../format/columns.js';
import { formatUnixNanos } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import { describeFailedGroup, monitorEval } from './eval-monitor.js';

/** The detail view of `eval status`. */
export function formatEvalDetail(ev: Evaluation, verbose = false): string {
  const pairs: [string, string][] = [
    ['ID', short(ev.ID, verbose)],
    ['Create Time', formatUnixNanos(ev.CreateTime)],
    ['Status', ev.Status],
    ['Status Description', ev.StatusDescription || '<none>'],
    ['Type', ev.Type],
    ['TriggeredBy', ev.TriggeredBy],
    ['Job ID', ev.JobID],
    ['Namespace', ev.Namespace],
    ['Priority', String(ev.Priority)],
    ['Placement Failures', String(Object.keys(ev.FailedTGAllocs ?? {}).length > 0)],
  ];
  if (ev.NodeID) pairs.push(['Node ID', short(ev.NodeID, verbose)]);
  if (ev.PreviousEval) pairs.push(['Previous Eval', short(ev.PreviousEval, verbose)]);
  if (ev.NextEval) pairs.push(['Next Eval', short(ev.NextEval, verbose)]);
  if (ev.BlockedEval) pairs.push(['Blocked Eval', short(ev.BlockedEval, verbose)]);
  let out = formatKV(pairs);
  const failed = Object.entries(ev.FailedTGAllocs ?? {});
  if (failed.length > 0) {
    out += '\n\n==> Failed Placements\n';
    out += failed.flatMap(([g, m]) => describeFailedGroup(g, m)).join('\n');
  }
  return out;
}

/** The table of `eval list`. */
export function formatEvalList(evals: Evaluation[], verbose = false): string {
  if (evals.length === 0) return 'No evals found';
  const rows = [['ID', 'Priority', 'Triggered By', 'Job ID', 'Namespace', 'Node ID', 'Status', 'Placement Failures']];
  for (const e of [...evals].sort((a, b) => b.CreateIndex - a.CreateIndex)) {
    rows.push([short(e.ID, verbose), String(e.Priority), e.TriggeredBy, e.JobID, e.Namespace, e.NodeID ? short(e.NodeID, verbose) : '<none>', e.Status, String(Object.keys(e.FailedTGAllocs ?? {}).length > 0)]);
  }
  return formatColumns(rows);
}

/** Registers `eval status` and `eval list`. */
export const evalCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const group = commandGroup(program, 'eval');
    addApiFlags(
      group
        .command('status')
        .description('Display the status of an evaluation')
        .argument('<id>', 'evaluation ID or prefix')
        .option('--monitor', 'follow the evaluation until it completes')
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string, opts: ApiFlags & { monitor?: boolean }) => {
      await runApiCommand(ctx, 'querying evaluation', async () => {
        const api = apiClient(ctx, opts);
        const evalId = await resolveIdPrefix(api, '/v1/evaluations', 'evaluation', id);
        if (opts.monitor) return monitorEval(ctx, api, evalId, opts.verbose);
        const { body } = await api.get<Evaluation>(`/v1/evaluation/${encodeURIComponent(evalId)}`);
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatEvalDetail(body, opts.verbose)}\n`);
        return ExitCode.Ok;
      });
    });
    addApiFlags(
      group
        .command('list')
        .description('List evaluations')
        .option('--job <id>', 'only evaluations of this job')
        .option('--status <status>', 'only evaluations with this status')
        .option('--verbose', 'show full IDs'),
    ).action(async (opts: ApiFlags & { job?: string; status?: string }) => {
      await runApiCommand(ctx, 'querying evaluations', async () => {
        const api = apiClient(ctx, opts);
        const { body } = await api.get<Evaluation[]>('/v1/evaluations', { job: opts.job, status: opts.status });
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatEvalList(body, opts.verbose)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
