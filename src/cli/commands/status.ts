/**
 * `caravan status [ID]`: without an argument, the job list; with one, whatever the ID (or
 * prefix) names — a job, allocation, evaluation or node — shown by its own status view.
 */
import type { Command } from 'commander';
import type { Allocation, Evaluation, Job, JobListStub, JobSummary, Node, AllocListStub, NodeListStub } from '../../structs/index.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import type { CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, sanitizeUuidPrefix, type ApiFlags } from './api-command.js';
import { formatAllocDetail } from './alloc-status.js';
import { formatEvalDetail } from './eval-commands.js';
import { formatJobDetail, formatJobList } from './job-status.js';
import { formatNodeDetail } from '../format/node-detail.js';

/** Registers `status`. */
export const statusCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      program
        .command('status')
        .description('Display the status of a job, allocation, evaluation or node (or list jobs)')
        .argument('[id]', 'ID or prefix of any object')
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string | undefined, opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying status', async () => {
        const api = apiClient(ctx, opts);
        const show = (value: unknown, text: string) => (opts.json ? printJson(ctx, value) : ctx.stdout.write(`${text}\n`));
        if (id === undefined) {
          const { body } = await api.get<JobListStub[]>('/v1/jobs');
          show(body, formatJobList(body));
          return ExitCode.Ok;
        }
        const jobs = (await api.get<JobListStub[]>('/v1/jobs', { prefix: id })).body;
        const job = jobs.find((j) => j.ID === id) ?? (jobs.length === 1 ? jobs[0] : undefined);
        if (job) {
          const path = `/v1/job/${encodeURIComponent(job.ID)}`;
          const full = (await api.get<Job>(path)).body;
          const summary = (await api.get<JobSummary>(`${path}/summary`)).body;
          const allocs = (await api.get<AllocListStub[]>(`${path}/allocations`)).body;
          show(full, formatJobDetail(full, summary, allocs, Date.now(), opts.verbose));
          return ExitCode.Ok;
        }
        const prefix = sanitizeUuidPrefix(id);
        const allocs = (await api.get<AllocListStub[]>('/v1/allocations', { prefix })).body.filter((a) => a.ID.startsWith(id));
        if (allocs.length === 1) {
          const a = (await api.get<Allocation>(`/v1/allocation/${allocs[0]!.ID}`)).body;
          show(a, formatAllocDetail(a, Date.now(), { verbose: opts.verbose ?? false }));
          return ExitCode.Ok;
        }
        const evals = (await api.get<Evaluation[]>('/v1/evaluations', { prefix })).body.filter((e) => e.ID.startsWith(id));
        if (evals.length === 1) {
          show(evals[0], formatEvalDetail(evals[0]!, opts.verbose));
          return ExitCode.Ok;
        }
        const nodes = (await api.get<NodeListStub[]>('/v1/nodes', { prefix })).body.filter((n) => n.ID.startsWith(id));
        if (nodes.length === 1) {
          const n = (await api.get<Node>(`/v1/node/${nodes[0]!.ID}`)).body;
          const na = (await api.get<Allocation[]>(`/v1/node/${n.ID}/allocations`)).body;
          show(n, formatNodeDetail(n, na, Date.now(), opts.verbose));
          return ExitCode.Ok;
        }
        ctx.stderr.write(`No matches found for "${id}"\n`);
        return ExitCode.Error;
      });
    });
  },
};
