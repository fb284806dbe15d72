/**
 * `caravan alloc exec [-i] [-t] [-task T] ALLOC CMD...`: runs a command in a running task, as
 * `nomad alloc exec`. With -t the local terminal is put in raw mode and its size follows
 * SIGWINCH; stdin is forwarded with -i (the default). Exits with the remote exit code.
 */
import { StringDecoder } from 'node:string_decoder';
import type { Command } from 'commander';
import type { Allocation } from '../../structs/alloc.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { cliTlsConnectOptions } from '../cli-tls.js';
import { resolveGlobalOptions } from '../global-options.js';
import { addApiFlags, apiClient, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import { ExecSessionError, runExecSession, type ExecSessionIo } from './alloc-exec-session.js';

interface ExecFlags extends ApiFlags {
  task?: string;
  i?: boolean;
  t?: boolean;
  job?: boolean;
}

/** The task to exec in: the flag, or the allocation's only task. */
export function pickTask(alloc: Pick<Allocation, 'TaskStates' | 'ID'>, flag: string | undefined): string {
  if (flag) return flag;
  const tasks = Object.keys(alloc.TaskStates ?? {});
  if (tasks.length === 1) return tasks[0]!;
  throw new CliUsageError(`please specify the task with -task: allocation ${alloc.ID.slice(0, 8)} has tasks ${tasks.join(', ') || '(none)'}`);
}

/** The local terminal as an exec session's I/O: stdout, stderr, stdin with -i, size with -t. */
export function localIo(ctx: CliContext, interactive: boolean, tty: boolean): ExecSessionIo {
  // Decoders keep a multi-byte character split across two frames intact.
  const out = new StringDecoder('utf8');
  const err = new StringDecoder('utf8');
  const io: ExecSessionIo = {
    stdout: (d) => ctx.stdout.write(out.write(d)),
    stderr: (d) => ctx.stderr.write(err.write(d)),
  };
  if (interactive) {
    io.stdin = (onData, onEnd) => {
      const stdin = process.stdin;
      const raw = tty && stdin.isTTY;
      if (raw) stdin.setRawMode(true);
      stdin.on('data', onData);
      stdin.on('end', onEnd);
      stdin.resume();
      return () => {
        stdin.off('data', onData);
        stdin.off('end', onEnd);
        if (raw) stdin.setRawMode(false);
        stdin.pause();
      };
    };
  }
  if (tty && process.stdout.isTTY) {
    io.initialSize = { width: process.stdout.columns, height: process.stdout.rows };
    io.resize = (onSize) => {
      const h = () => onSize({ width: process.stdout.columns, height: process.stdout.rows });
      process.on('SIGWINCH', h);
      return () => process.off('SIGWINCH', h);
    };
  }
  return io;
}

/** Registers `alloc exec`. */
export const allocExecCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('exec')
        .description('Execute a command in a running allocation (use -- before commands with flags)')
        .argument('<alloc>', 'allocation ID or prefix')
        .argument('<command...>', 'the command and its arguments')
        .option('--task <name>', 'the task to run the command in (required if the allocation has several)')
        .option('-i', 'forward stdin (default true)', true)
        .option('-t', 'allocate a pseudo-terminal (default: when stdin is a terminal)')
        .allowUnknownOption(),
    ).action(async (alloc: string, command: string[], opts: ExecFlags) => {
      await runApiCommand(ctx, 'executing command', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        const { body } = await api.get<Allocation>(`/v1/allocation/${encodeURIComponent(allocId)}`);
        const task = pickTask(body, opts.task);
        const tty = opts.t ?? Boolean(process.stdin.isTTY);
        const g = resolveGlobalOptions(opts, ctx.env);
        try {
          return await runExecSession(
            { address: g.address, token: g.token, allocId, task, command, tty, tls: cliTlsConnectOptions(g.tls) },
            localIo(ctx, opts.i !== false, tty),
          );
        } catch (err) {
          if (!(err instanceof ExecSessionError)) throw err;
          ctx.stderr.write(`failed to exec into task: ${err.message}\n`);
          return ExitCode.Error;
        }
      });
    });
  },
};
