/**
 * `caravan job run -output FILE`: prints the job a server would receive (`{"Job": …}`, canonical,
 * validated) without contacting a server. `runJobOutput` is exported so the networked `job run`
 * command can delegate its `-output` mode here. Until that command lands, `job run` without
 * `-output` reports that no server is reachable.
 */
import type { Command } from 'commander';
import { loadJobFile } from '../../jobspec/parse-jobspec.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { resolveGlobalOptions } from '../global-options.js';
import { collect } from './job-file-flags.js';
import { reportJobFileError } from './job-validate.js';

/** Flags of `job run` that the -output mode reads. */
export interface JobRunOutputFlags {
  var?: string[];
  varFile?: string[];
}

/** Parses, canonicalizes and validates `file`, then prints `{"Job": …}`; returns the exit code. */
export async function runJobOutput(ctx: CliContext, file: string, flags: JobRunOutputFlags): Promise<number> {
  try {
    const job = await loadJobFile(file, { vars: flags.var ?? [], varFiles: flags.varFile ?? [], cwd: ctx.cwd });
    ctx.stdout.write(`${JSON.stringify({ Job: job }, null, 4)}\n`);
    return ExitCode.Ok;
  } catch (err) {
    return reportJobFileError(ctx, file, err);
  }
}

/** Registers a placeholder `job run` that supports only `-output` (no server contact). */
export const jobRunOutputCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    commandGroup(program, 'job')
      .command('run')
      .description('Submit a job file to the cluster (-output prints the JSON instead)')
      .argument('<file>', 'job file (HCL2 or JSON)')
      .option('--output', 'print the job as API JSON instead of submitting it')
      .option('--var <name=value>', 'set an HCL variable (repeatable)', collect, [])
      .option('--var-file <file>', 'read HCL variables from a file (repeatable)', collect, [])
      .option('--address <url>', 'HTTP address of the agent')
      .option('--token <secret>', 'ACL token')
      .option('--detach', 'return after submitting without monitoring')
      .action(async (file: string, opts: JobRunOutputFlags & { output?: boolean; address?: string; token?: string }) => {
        if (opts.output) {
          ctx.exitCode = await runJobOutput(ctx, file, opts);
          return;
        }
        const { address } = resolveGlobalOptions(opts, ctx.env);
        ctx.stderr.write(`Error submitting job: cannot reach server at ${address}: job submission is not available in this build (use -output to print the job)\n`);
        ctx.exitCode = ExitCode.Error;
      });
  },
};
