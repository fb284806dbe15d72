/**
 * `caravan job run -output FILE`: prints the job a server would receive (`{"Job": …}`, canonical,
 * validated) without contacting a server. `job run` delegates its
 * `-output` mode here.
 */
import { loadJobFile } from '../../jobspec/parse-jobspec.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { reportJobFileError } from './job-validate.js';

/** Flags of `job run` that the -output mode reads. */
export interface JobRunOutputFlags {
  var?: string[];
  varFile?: string[];
}

/** Parses, canonicalizes and validates `file`, then prints `{"Job": …}`; returns the exit code. */
export async function runJobOutput(ctx: CliContext, file: string, flags: JobRunOutputFlags): Promise<number> {
  try {
    const job = await loadJobFile(file, { vars: flags.var ?? [], varFiles: flags.varFile ?? [], cwd: ctx.cwd, env: ctx.env });
    ctx.stdout.write(`${JSON.stringify({ Job: job }, null, 4)}\n`);
    return ExitCode.Ok;
  } catch (err) {
    return reportJobFileError(ctx, file, err);
  }
}
