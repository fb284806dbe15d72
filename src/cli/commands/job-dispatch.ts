/**
 * `caravan job dispatch [-meta k=v]... [-detach] [-idempotency-token T] [-id-prefix-template T]
 * JOB [INPUT_FILE|-]`: dispatches a parameterized job with metadata and an optional payload
 * (a file, or standard input for "-"), prints the child job's ID and monitors its evaluation
 * like `job run`.
 */
import { readStdin } from '../read-stdin.js';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { DispatchResult } from '../../server/dispatch/dispatch-job.js';
import type { CliContext } from '../cli-context.js';
import { CliUsageError, ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { short } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { monitorEval } from './eval-monitor.js';
import { collect } from './job-file-flags.js';
import { resolveJobId } from './job-lookup.js';

interface JobDispatchFlags extends ApiFlags {
  meta?: string[];
  detach?: boolean;
  idempotencyToken?: string;
  idPrefixTemplate?: string;
  verbose?: boolean;
}

/** Parses repeated `-meta key=value` flags; a flag without "=" is a usage error naming it. */
export function parseMetaFlags(flags: readonly string[]): Record<string, string> {
  const meta: Record<string, string> = {};
  for (const f of flags) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw new CliUsageError(`-meta: expected key=value, got ${JSON.stringify(f)}`);
    meta[f.slice(0, eq)] = f.slice(eq + 1);
  }
  return meta;
}

/** Registers `job dispatch`. */
export const jobDispatchCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('dispatch')
        .description('Dispatch an instance of a parameterized job')
        .argument('<job>', 'parameterized job ID or prefix')
        .argument('[input]', 'payload file, or "-" for standard input')
        .option('--meta <key=value>', 'dispatch metadata (repeatable)', collect, [])
        .option('--detach', 'return after dispatching, printing the evaluation ID')
        .option('--idempotency-token <token>', 'dispatch at most one child with this token')
        .option('--id-prefix-template <text>', 'text put in the dispatched job ID before the time')
        .option('--verbose', 'show full IDs'),
    ).action(async (job: string, input: string | undefined, opts: JobDispatchFlags) => {
      const meta = parseMetaFlags(opts.meta ?? []);
      await runApiCommand(ctx, 'dispatching job', async () => {
        let payload: Buffer = Buffer.alloc(0);
        if (input === '-') payload = await readStdin();
        else if (input !== undefined) payload = await readFile(resolve(ctx.cwd, input));
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, job);
        const { body } = await api.put<DispatchResult>(`/v1/job/${encodeURIComponent(jobId)}/dispatch`, {
          Payload: payload.toString('base64'),
          Meta: meta,
          IdempotencyToken: opts.idempotencyToken ?? '',
          IdPrefixTemplate: opts.idPrefixTemplate ?? '',
        });
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        ctx.stdout.write(`Dispatched Job ID = ${body.DispatchedJobID}\n`);
        if (body.EvalID) ctx.stdout.write(`Evaluation ID     = ${short(body.EvalID, opts.verbose)}\n`);
        if (opts.detach || !body.EvalID) return ExitCode.Ok;
        ctx.stdout.write('\n');
        return monitorEval(ctx, api, body.EvalID, opts.verbose);
      });
    });
  },
};
