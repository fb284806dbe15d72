/**
 * `caravan deployment list|status|promote|fail|pause|resume|unblock` and `caravan job promote`, as
 * Nomad's: IDs may be prefixes; promote takes `-group` (repeatable, default all groups); the
 * writes print the evaluation they created and, unless `-detach`, monitor the deployment.
 */
import type { Command } from 'commander';
import type { Deployment } from '../../structs/index.js';
import type { ApiClient } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { short } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import { collect } from './job-file-flags.js';
import { resolveJobId } from './job-lookup.js';
import { formatDeployment, formatDeploymentList } from './deployment-format.js';
import { monitorDeployment } from './deployment-monitor.js';

interface DeploymentFlags extends ApiFlags {
  verbose?: boolean;
  monitor?: boolean;
  detach?: boolean;
  group?: string[];
}

interface UpdateResponse {
  EvalID: string;
  DeploymentModifyIndex: number;
}

/** Sends a deployment write and reports it like Nomad; monitors unless detached. */
async function writeAndReport(
  ctx: CliContext,
  api: ApiClient,
  id: string,
  path: string,
  body: Record<string, unknown>,
  opts: DeploymentFlags,
  done: string,
): Promise<number> {
  const { body: res } = await api.put<UpdateResponse>(`/v1/deployment/${path}/${encodeURIComponent(id)}`, { DeploymentID: id, ...body });
  if (opts.json) {
    printJson(ctx, res);
    return ExitCode.Ok;
  }
  ctx.stdout.write(`${done}\n`);
  if (res.EvalID) ctx.stdout.write(`Evaluation ID: ${short(res.EvalID, opts.verbose)}\n`);
  if (opts.detach || !res.EvalID) return ExitCode.Ok;
  return monitorDeployment(ctx, api, id, opts.verbose);
}

async function resolveDeployment(api: ApiClient, prefix: string): Promise<string> {
  return resolveIdPrefix(api, '/v1/deployments', 'deployment', prefix);
}

/** Registers the deployment commands and `job promote`. */
export const deploymentCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const group = commandGroup(program, 'deployment');

    addApiFlags(group.command('list').description('List deployments').option('--verbose', 'show full IDs')).action(
      async (opts: DeploymentFlags) => {
        await runApiCommand(ctx, 'retrieving deployments', async () => {
          const { body } = await apiClient(ctx, opts).get<Deployment[]>('/v1/deployments');
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`${formatDeploymentList(body, opts.verbose)}\n`);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(
      group
        .command('status')
        .description('Display the status of a deployment')
        .argument('<id>', 'deployment ID or prefix')
        .option('--monitor', 'follow the deployment until it ends')
        .option('--verbose', 'show full IDs'),
    ).action(async (prefix: string, opts: DeploymentFlags) => {
      await runApiCommand(ctx, 'retrieving deployment', async () => {
        const api = apiClient(ctx, opts);
        const id = await resolveDeployment(api, prefix);
        if (opts.monitor) return monitorDeployment(ctx, api, id, opts.verbose);
        const { body } = await api.get<Deployment>(`/v1/deployment/${encodeURIComponent(id)}`);
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatDeployment(body, opts.verbose)}\n`);
        return ExitCode.Ok;
      });
    });

    const writeCommand = (name: string, description: string, path: string, body: Record<string, unknown>, done: (id: string) => string) =>
      addApiFlags(
        group
          .command(name)
          .description(description)
          .argument('<id>', 'deployment ID or prefix')
          .option('--detach', 'return without monitoring the deployment')
          .option('--verbose', 'show full IDs'),
      ).action(async (prefix: string, opts: DeploymentFlags) => {
        await runApiCommand(ctx, `${name} deployment`, async () => {
          const api = apiClient(ctx, opts);
          const id = await resolveDeployment(api, prefix);
          return writeAndReport(ctx, api, id, path, body, opts, done(short(id, opts.verbose)));
        });
      });
    writeCommand('fail', 'Mark a deployment as failed', 'fail', {}, (id) => `Deployment "${id}" failed`);
    writeCommand('pause', 'Pause a deployment', 'pause', { Pause: true }, (id) => `Deployment "${id}" paused`);
    writeCommand('resume', 'Resume a paused deployment', 'pause', { Pause: false }, (id) => `Deployment "${id}" resumed`);
    // A multiregion deployment's unblock; with one region Nomad CE (and Caravan) answer success doing nothing.
    writeCommand('unblock', 'Unblock a blocked multiregion deployment', 'unblock', {}, (id) => `Deployment "${id}" unblocked`);

    addApiFlags(
      group
        .command('promote')
        .description("Promote a deployment's canaries")
        .argument('<id>', 'deployment ID or prefix')
        .option('--group <name>', 'promote only this task group (repeatable)', collect, [])
        .option('--detach', 'return without monitoring the deployment')
        .option('--verbose', 'show full IDs'),
    ).action(async (prefix: string, opts: DeploymentFlags) => {
      await runApiCommand(ctx, 'promoting deployment', async () => {
        const api = apiClient(ctx, opts);
        const id = await resolveDeployment(api, prefix);
        const groups = opts.group ?? [];
        const body = groups.length > 0 ? { Groups: groups } : { All: true };
        return writeAndReport(ctx, api, id, 'promote', body, opts, `Deployment "${short(id, opts.verbose)}" promoted`);
      });
    });

    addApiFlags(
      commandGroup(program, 'job')
        .command('promote')
        .description("Promote the canaries of a job's latest deployment")
        .argument('<job>', 'job ID or prefix')
        .option('--group <name>', 'promote only this task group (repeatable)', collect, [])
        .option('--detach', 'return without monitoring the deployment')
        .option('--verbose', 'show full IDs'),
    ).action(async (jobPrefix: string, opts: DeploymentFlags) => {
      await runApiCommand(ctx, 'promoting deployment', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, jobPrefix);
        const { body: d } = await api.get<Deployment | null>(`/v1/job/${encodeURIComponent(jobId)}/deployment`);
        if (!d) {
          ctx.stderr.write(`Job "${jobId}" has no deployment to promote\n`);
          return ExitCode.Error;
        }
        const groups = opts.group ?? [];
        const body = groups.length > 0 ? { Groups: groups } : { All: true };
        return writeAndReport(ctx, api, d.ID, 'promote', body, opts, `Deployment "${short(d.ID, opts.verbose)}" promoted`);
      });
    });
  },
};
