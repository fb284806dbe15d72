/**
 * `caravan job start [-detach] [-verbose] JOB`: runs a stopped job again by registering its
 * current version with `Stop` cleared, as Nomad's `job start` does (a job that is not stopped
 * is an error); then follows the evaluation unless detached.
 */
import type { Command } from 'commander';
import type { Job, JobRegisterResponse } from '../../structs/job.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, runApiCommand, type ApiFlags } from './api-command.js';
import { monitorEval } from './eval-monitor.js';
import { resolveJobId } from './job-lookup.js';

export const jobStartCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('start')
        .description('Start a stopped job')
        .argument('<job>', 'job ID or prefix')
        .option('--detach', 'return at once, printing the evaluation ID')
        .option('--verbose', 'show full IDs'),
    ).action(async (prefix: string, opts: ApiFlags & { detach?: boolean }) => {
      await runApiCommand(ctx, 'starting job', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, prefix);
        const { body: job } = await api.get<Job>(`/v1/job/${encodeURIComponent(jobId)}`);
        if (!job.Stop) {
          ctx.stderr.write(`Job "${job.Name}" has not been stopped\n`);
          return ExitCode.Error;
        }
        const { body: res } = await api.put<JobRegisterResponse>('/v1/jobs', { Job: { ...job, Stop: false } });
        const parameterized = job.ParameterizedJob !== null;
        const periodic = job.Periodic !== null && job.Periodic.Enabled;
        if (opts.detach || periodic || parameterized || !res.EvalID) {
          ctx.stdout.write('Job start successful\n');
          if (!parameterized && res.EvalID) ctx.stdout.write(`Evaluation ID: ${res.EvalID}\n`);
          return ExitCode.Ok;
        }
        return monitorEval(ctx, api, res.EvalID, opts.verbose);
      });
    });
  },
};
