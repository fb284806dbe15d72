/**
 * `caravan job validate [-var k=v] [-var-file F] FILE...`: parses, canonicalizes and validates
 * job files without contacting a server. Prints every problem of every file; exit 0 when all
 * are valid, 1 when any is not.
 */
import type { Command } from 'commander';
import { JobspecParseError } from '../../jobspec/jobspec-error.js';
import { loadJobFile } from '../../jobspec/parse-jobspec.js';
import { JobValidationError, formatValidationProblem } from '../../structs/job-validate.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { collect } from './job-file-flags.js';

/** Options shared by commands that read a job file: `-var` (repeatable) and `-var-file`. */
export interface JobFileFlags {
  var?: string[];
  varFile?: string[];
  json?: boolean;
}

/**
 * Prints a jobspec or validation error as Nomad-style lines on stderr and returns exit code 1;
 * rethrows anything else (a bug, not bad input).
 */
export function reportJobFileError(ctx: CliContext, file: string, err: unknown): number {
  if (err instanceof JobspecParseError) {
    ctx.stderr.write(`Error parsing job file ${file}:\n${err.message.split('\n').map((l) => `  ${l}`).join('\n')}\n`);
    return ExitCode.Error;
  }
  if (err instanceof JobValidationError) {
    ctx.stderr.write(`Job validation errors in ${file}:\n${err.problems.map((p) => `  * ${formatValidationProblem(p)}`).join('\n')}\n`);
    return ExitCode.Error;
  }
  throw err;
}

/** Registers `job validate`. */
export const jobValidateCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    commandGroup(program, 'job')
      .command('validate')
      .description('Check job files for syntax and validity without submitting them')
      .argument('<files...>', 'job files (HCL2 or JSON)')
      .option('--var <name=value>', 'set an HCL variable (repeatable)', collect, [])
      .option('--var-file <file>', 'read HCL variables from a file (repeatable)', collect, [])
      .option('--json', 'treat the files as API JSON (detected automatically) and print results as JSON')
      .action(async (files: string[], opts: JobFileFlags) => {
        let code: number = ExitCode.Ok;
        const results: { File: string; Valid: boolean; Errors: string[] }[] = [];
        for (const file of files) {
          try {
            await loadJobFile(file, { vars: opts.var ?? [], varFiles: opts.varFile ?? [], cwd: ctx.cwd, env: ctx.env });
            results.push({ File: file, Valid: true, Errors: [] });
            if (!opts.json) ctx.stdout.write(`Job validation successful: ${file}\n`);
          } catch (err) {
            if (opts.json && (err instanceof JobspecParseError || err instanceof JobValidationError)) {
              const errors = err instanceof JobValidationError ? err.problems.map(formatValidationProblem) : err.message.split('\n');
              results.push({ File: file, Valid: false, Errors: errors });
              code = ExitCode.Error;
              continue;
            }
            code = reportJobFileError(ctx, file, err);
          }
        }
        if (opts.json) ctx.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
        ctx.exitCode = code;
      });
  },
};
