/**
 * `caravan job revert [-detach] JOB VERSION` and `caravan job scale [-detach] JOB [GROUP] COUNT`:
 * the /v1/job/:id/revert and /v1/job/:id/scale writes, monitored as `job run` is: the
 * evaluation (allocations it placed "created", those it updated in place "modified"), then the
 * deployment it runs in; -detach prints the evaluation ID and returns.
 */
import type { Command } from 'commander';
import type { Job } from '../../structs/job.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { monitorEvalAndDeployment } from './eval-monitor.js';
import { resolveJobId } from './job-lookup.js';

interface DetachFlags extends ApiFlags {
  detach?: boolean;
}

function nonNegativeInt(what: string, raw: string): number {
  if (!/^\d+$/.test(raw)) throw new CliUsageError(`${what} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

async function finish(ctx: CliContext, opts: DetachFlags, body: { EvalID: string }, api: ReturnType<typeof apiClient>): Promise<number> {
  if (opts.json) {
    printJson(ctx, body);
    return ExitCode.Ok;
  }
  if (opts.detach || !body.EvalID) {
    ctx.stdout.write(`${body.EvalID}\n`);
    return ExitCode.Ok;
  }
  // As Nomad's: the evaluation, then the rollout it starts (a scale or a revert makes a new deployment).
  return monitorEvalAndDeployment(ctx, api, body.EvalID, opts.verbose);
}

/** Registers `job revert` and `job scale`. */
export const jobActionCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const job = commandGroup(program, 'job');
    addApiFlags(
      job
        .command('revert')
        .description('Revert a job to an earlier version')
        .argument('<job>', 'job ID or prefix')
        .argument('<version>', 'the version to revert to')
        .option('--detach', 'return after submitting, printing the evaluation ID')
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string, rawVersion: string, opts: DetachFlags) => {
      const version = nonNegativeInt('version', rawVersion);
      await runApiCommand(ctx, 'reverting job', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, id);
        const { body } = await api.put<{ EvalID: string }>(`/v1/job/${encodeURIComponent(jobId)}/revert`, { JobID: jobId, JobVersion: version });
        return finish(ctx, opts, body, api);
      });
    });

    addApiFlags(
      job
        .command('scale')
        .description("Change the count of a job's task group")
        .argument('<job>', 'job ID or prefix')
        .argument('[group]', 'task group (optional when the job has one)')
        .argument('[count]', 'the new count')
        .option('--detach', 'return after submitting, printing the evaluation ID')
        .option('--verbose', 'show full IDs'),
    ).action(async (id: string, groupOrCount: string | undefined, maybeCount: string | undefined, opts: DetachFlags) => {
      if (groupOrCount === undefined) throw new CliUsageError('job scale needs a count: caravan job scale <job> [<group>] <count>');
      const rawCount = maybeCount ?? groupOrCount;
      const count = nonNegativeInt('count', rawCount);
      await runApiCommand(ctx, 'scaling job', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, id);
        let group = maybeCount === undefined ? undefined : groupOrCount;
        if (group === undefined) {
          const { body: current } = await api.get<Job>(`/v1/job/${encodeURIComponent(jobId)}`);
          if (current.TaskGroups.length !== 1) {
            throw new CliUsageError(`job "${jobId}" has ${current.TaskGroups.length} task groups: name the group to scale`);
          }
          group = current.TaskGroups[0]!.Name;
        }
        const { body } = await api.put<{ EvalID: string }>(`/v1/job/${encodeURIComponent(jobId)}/scale`, { Count: count, Target: { Job: jobId, Group: group } });
        return finish(ctx, opts, body, api);
      });
    });
  },
};
