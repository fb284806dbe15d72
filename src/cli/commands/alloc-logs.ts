/**
 * `caravan alloc logs [-f] [-stderr] [-tail] [-n N] [-c BYTES] [-task T] ALLOC [TASK]`: prints a
 * task's stdout (or stderr), optionally only its end and optionally following it, as
 * `nomad alloc logs`.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Command } from 'commander';
import type { Allocation } from '../../structs/alloc.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { resolveGlobalOptions } from '../global-options.js';
import { addApiFlags, apiClient, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import { pickTask } from './alloc-exec.js';
import { readStreamingBody } from './alloc-stream-body.js';

interface LogsFlags extends ApiFlags {
  f?: boolean;
  stderr?: boolean;
  tail?: boolean;
  n?: string;
  c?: string;
  task?: string;
}

/** The last `n` lines of `text` (a trailing newline does not count as a line). */
export function lastLines(text: string, n: number): string {
  if (n <= 0) return '';
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const lines = body.split('\n');
  const kept = lines.slice(Math.max(0, lines.length - n)).join('\n');
  return text.endsWith('\n') ? kept + '\n' : kept;
}

function positiveInt(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new CliUsageError(`invalid value for -${flag}: ${JSON.stringify(v)} (want a non-negative integer)`);
  return Number(v);
}

/** Registers `alloc logs`. */
export const allocLogsCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('logs')
        .description("Stream the logs of an allocation's task")
        .argument('<alloc>', 'allocation ID or prefix')
        .argument('[task]', 'the task (required if the allocation has several)')
        .option('-f', 'follow the log as it grows')
        .option('--stderr', 'show stderr instead of stdout')
        .option('--tail', 'show only the end of the log (10 lines unless -n or -c)')
        .option('-n <lines>', 'with -tail, the number of lines')
        .option('-c <bytes>', 'with -tail, the number of bytes')
        .option('--task <name>', 'the task'),
    ).action(async (alloc: string, taskArg: string | undefined, opts: LogsFlags) => {
      await runApiCommand(ctx, 'reading logs', async () => {
        const lines = positiveInt(opts.n, 'n');
        const bytes = positiveInt(opts.c, 'c');
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        const { body } = await api.get<Allocation>(`/v1/allocation/${encodeURIComponent(allocId)}`);
        const task = pickTask(body, taskArg ?? opts.task);
        const g = resolveGlobalOptions(opts, ctx.env);
        const type = opts.stderr ? 'stderr' : 'stdout';
        const path = `/v1/client/fs/logs/${encodeURIComponent(allocId)}`;
        const decoder = new StringDecoder('utf8');
        const tail = opts.tail === true || lines !== undefined || bytes !== undefined;
        if (tail) {
          // Read the end once, cut it to size, then (with -f) follow from the end.
          const wantLines = bytes === undefined ? (lines ?? 10) : undefined;
          const offset = bytes ?? Math.max(4096, (wantLines ?? 10) * 1024);
          let text = '';
          await readStreamingBody(api.url(path, { task, type, plain: true, origin: 'end', offset }), g.token, (c) => {
            text += decoder.write(c);
          }, undefined, api.fetchFn);
          ctx.stdout.write(wantLines === undefined ? text : lastLines(text, wantLines));
          if (!opts.f) return ExitCode.Ok;
        }
        const ac = new AbortController();
        const onSigint = () => ac.abort();
        process.once('SIGINT', onSigint);
        try {
          const query = tail ? { task, type, plain: true, follow: opts.f === true, origin: 'end', offset: 0 } : { task, type, plain: true, follow: opts.f === true };
          await readStreamingBody(api.url(path, query), g.token, (c) => ctx.stdout.write(decoder.write(c)), ac.signal, api.fetchFn);
        } finally {
          process.off('SIGINT', onSigint);
        }
        return ExitCode.Ok;
      });
    });
  },
};
