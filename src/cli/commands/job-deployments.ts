/**
 * `caravan job deployments [-latest] [-all] [-verbose] [-json] JOB`: a job's deployments, or
 * with `-latest` the details of its newest one, as Nomad's `job deployments` shows them.
 */
import type { Command } from 'commander';
import type { Deployment } from '../../structs/deployment.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { formatDeployment, formatDeploymentList } from './deployment-format.js';
import { resolveJobId } from './job-lookup.js';

export const jobDeploymentsCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('deployments')
        .description('List the deployments of a job')
        .argument('<job>', 'job ID or prefix')
        .option('--latest', 'show only the latest deployment, in detail')
        .option('--all', 'also the deployments of an earlier job with the same ID')
        .option('--verbose', 'show full IDs'),
    ).action(async (prefix: string, opts: ApiFlags & { latest?: boolean; all?: boolean }) => {
      await runApiCommand(ctx, 'retrieving deployments', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, prefix);
        const path = `/v1/job/${encodeURIComponent(jobId)}`;
        if (opts.latest) {
          const { body } = await api.get<Deployment | null>(`${path}/deployment`, opts.all ? { all: 'true' } : {});
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(body ? `${formatDeployment(body, opts.verbose)}\n` : 'No deployment found\n');
          return ExitCode.Ok;
        }
        const { body } = await api.get<Deployment[]>(`${path}/deployments`, opts.all ? { all: 'true' } : {});
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatDeploymentList(body, opts.verbose)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
