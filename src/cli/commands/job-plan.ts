/**
 * `caravan job plan FILE`: asks the server what registering the job would do and prints Nomad's
 * annotated diff of the job (see format/job-diff-text.ts), the scheduler's dry run and the Job Modify Index to pass to
 * `job run -check-index`. Exit 0 when nothing would change, 1 when allocations would change
 * and on errors (Nomad uses 255 for errors; our CLI keeps to 0/1/2).
 */
import type { Command } from 'commander';
import type { DesiredUpdates, Evaluation } from '../../structs/index.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { describeFailedGroup } from './eval-monitor.js';
import { collect } from './job-file-flags.js';
import { loadJobForCommand } from './job-run.js';
import { formatJobDiff } from '../format/job-diff-text.js';
import { colorDiffMarkers, styleFor } from '../format/colorize.js';
import type { JobDiff } from '../../structs/job-diff/index.js';

/** The plan response as the CLI reads it. */
export interface JobPlanResponse {
  Annotations: { DesiredTGUpdates: Record<string, DesiredUpdates> } | null;
  FailedTGAllocs: Evaluation['FailedTGAllocs'];
  JobModifyIndex: number;
  Diff: JobDiff | null;
  Warnings: string;
}

/** True when the plan would change allocations. */
export function planChanges(updates: Record<string, DesiredUpdates>): boolean {
  return Object.values(updates).some((u) => u.Place + u.Stop + u.DestructiveUpdate + u.InPlaceUpdate + u.Migrate + u.Canary > 0);
}

/** Registers `job plan`. */
export const jobPlanCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('plan')
        .description('Dry-run a job update to see what the scheduler would do')
        .argument('<file>', 'job file (HCL2 or JSON)')
        .option('--var <name=value>', 'set an HCL variable (repeatable)', collect, [])
        .option('--var-file <file>', 'read HCL variables from a file (repeatable)', collect, [])
        .option('--diff [bool]', 'show the diff between the registered job and the submitted one (default true)')
        .option('--verbose', 'show the fields of unchanged blocks too'),
    ).action(async (file: string, opts: ApiFlags & { var?: string[]; varFile?: string[]; diff?: boolean | string; verbose?: boolean }) => {
      const job = await loadJobForCommand(ctx, file, opts);
      if (!job) {
        ctx.exitCode = ExitCode.Error;
        return;
      }
      await runApiCommand(ctx, 'during plan', async () => {
        const api = apiClient(ctx, opts);
        const { body } = await api.post<JobPlanResponse>(`/v1/job/${encodeURIComponent(job.ID)}/plan`, { Job: job, Diff: true });
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        const updates = body.Annotations?.DesiredTGUpdates ?? {};
        // Nomad's colours: diff markers, a bold dry-run title, a green success or a bold yellow warning.
        const style = styleFor(ctx, opts);
        if (opts.diff !== false && opts.diff !== 'false' && body.Diff) {
          ctx.stdout.write(`${colorDiffMarkers(formatJobDiff(body.Diff, opts.verbose === true).trim(), style)}\n\n`);
        }
        ctx.stdout.write(`${style.bold('Scheduler dry-run:')}\n`);
        const failed = Object.entries(body.FailedTGAllocs ?? {});
        if (failed.length === 0) ctx.stdout.write(`${style.green('- All tasks successfully allocated.')}\n`);
        else {
          ctx.stdout.write(`${style.bold(style.yellow('- WARNING: Failed to place all allocations.'))}\n`);
          for (const [g, m] of failed) for (const l of describeFailedGroup(g, m)) ctx.stdout.write(`  ${style.yellow(l)}\n`);
        }
        if (body.Warnings) ctx.stdout.write(`\n${style.bold(style.yellow('Job Warnings:'))}\n${body.Warnings}\n`);
        ctx.stdout.write(`\n${style.bold(`Job Modify Index: ${body.JobModifyIndex}`)}\n`);
        ctx.stdout.write(`To submit the job with version verification run:\n\ncaravan job run -check-index ${body.JobModifyIndex} ${file}\n`);
        return planChanges(updates) ? ExitCode.Error : ExitCode.Ok;
      });
    });
  },
};
