/**
 * `caravan job run FILE`: parses the job file (HCL2 or JSON, `-var`, `-var-file`), registers
 * it, and monitors the evaluation like `nomad job run`. `-detach` prints the eval ID and
 * returns; `-output` prints the job JSON without submitting (runJobOutput); `-check-index`
 * enforces the job modify index. Exit 2 when placement failed. When the registration started a
 * deployment, it is monitored to its end (exit 1 when it fails).
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadJobFile } from '../../jobspec/parse-jobspec.js';
import { JOB_PRIORITY_CEILING } from '../../structs/job-defaults.js';
import type { Job, JobRegisterResponse } from '../../structs/job.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { monitorEval } from './eval-monitor.js';
import { deploymentOfRegistration, monitorDeployment } from './deployment-monitor.js';
import { collect } from './job-file-flags.js';
import { runJobOutput } from './job-run-output.js';
import { reportJobFileError } from './job-validate.js';
import { resolveGlobalOptions, type GlobalFlagValues } from '../global-options.js';

/** Flags of `job run`. */
export interface JobRunFlags extends ApiFlags {
  var?: string[];
  varFile?: string[];
  detach?: boolean;
  output?: boolean;
  checkIndex?: string;
  verbose?: boolean;
}

/**
 * The source sent with a registration (Nomad's Submission), kept per version by the server
 * for `GET /v1/job/:id/submission`; undefined when the file cannot be read again.
 */
async function jobSubmission(ctx: CliContext, file: string, opts: JobRunFlags): Promise<Record<string, unknown> | undefined> {
  try {
    const source = await readFile(resolve(ctx.cwd, file), 'utf8');
    const flags: Record<string, string> = {};
    for (const kv of opts.var ?? []) {
      const eq = kv.indexOf('=');
      if (eq > 0) flags[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    return { Source: source, Format: /\.json$/i.test(file) ? 'json' : 'hcl2', VariableFlags: flags, Variables: '' };
  } catch {
    return undefined;
  }
}

/** Loads a job file for a command; undefined (with the error printed) when it is invalid. */
export async function loadJobForCommand(ctx: CliContext, file: string, flags: { var?: string[]; varFile?: string[] } & GlobalFlagValues): Promise<Job | undefined> {
  try {
    const namespace = resolveGlobalOptions(flags, ctx.env).namespace;
    // The server bounds priority by its own job_max_priority: only the absolute ceiling is checked here.
    return await loadJobFile(file, { vars: flags.var ?? [], varFiles: flags.varFile ?? [], cwd: ctx.cwd, env: ctx.env, namespace, maxPriority: JOB_PRIORITY_CEILING });
  } catch (err) {
    reportJobFileError(ctx, file, err);
    return undefined;
  }
}

/** Registers `job run` (replacing the -output-only placeholder). */
export const jobRunCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('run')
        .description('Submit a job file and monitor its evaluation')
        .argument('<file>', 'job file (HCL2 or JSON)')
        .option('--detach', 'return after submitting, printing the evaluation ID')
        .option('--output', 'print the job as API JSON instead of submitting it')
        .option('--check-index <index>', 'register only if the job modify index matches')
        .option('--var <name=value>', 'set an HCL variable (repeatable)', collect, [])
        .option('--var-file <file>', 'read HCL variables from a file (repeatable)', collect, [])
        .option('--verbose', 'show full IDs'),
    ).action(async (file: string, opts: JobRunFlags) => {
      if (opts.output) {
        ctx.exitCode = await runJobOutput(ctx, file, opts);
        return;
      }
      const job = await loadJobForCommand(ctx, file, opts);
      if (!job) {
        ctx.exitCode = ExitCode.Error;
        return;
      }
      await runApiCommand(ctx, 'submitting job', async () => {
        const api = apiClient(ctx, opts);
        const body: Record<string, unknown> = { Job: job, Submission: await jobSubmission(ctx, file, opts) };
        if (opts.checkIndex !== undefined) {
          body['EnforceIndex'] = true;
          body['JobModifyIndex'] = Number(opts.checkIndex);
        }
        const { body: res } = await api.put<JobRegisterResponse>('/v1/jobs', body);
        if (opts.json) {
          printJson(ctx, res);
          return ExitCode.Ok;
        }
        if (res.Warnings) ctx.stdout.write(`Job Warnings:\n${res.Warnings}\n\n`);
        if (opts.detach || !res.EvalID) {
          ctx.stdout.write(`Job registration successful\n`);
          if (res.EvalID) ctx.stdout.write(`Evaluation ID: ${res.EvalID}\n`);
          return ExitCode.Ok;
        }
        const code = await monitorEval(ctx, api, res.EvalID, opts.verbose);
        if (code !== ExitCode.Ok) return code;
        // Like `nomad job run`: a rollout is followed to its end.
        const deployment = await deploymentOfRegistration(api, job.ID, res.JobModifyIndex);
        return deployment ? monitorDeployment(ctx, api, deployment.ID, opts.verbose) : code;
      });
    });
  },
};
