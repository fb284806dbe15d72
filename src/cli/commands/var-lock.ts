/**
 * `caravan var lock [options] <path> [<spec>] <child…>` or `<spec> <child…>`, as Nomad's
 * `nomad var lock`: acquires the lock of the variable at <path> (creating the variable if there
 * is none, with the items of the specification when one is given), runs the child command while
 * renewing the lock every 0.7 × TTL, and releases the lock when the child exits. While another
 * holder has the lock it waits 1.1 × TTL (`-backoff`) between attempts, or with `-early-return`
 * gives up at once (exit 0 without running the child). A lost lock (a renewal refused) kills the
 * child. The child runs through $SHELL (default /bin/sh) `-c` unless `-shell=false`; SIGINT and
 * SIGTERM are forwarded to it. A child that fails, or a lock error, exits 1.
 * `-max-retry` bounds the retries of a call the agent answered with a 5xx or could not take.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Command } from 'commander';
import { formatDuration, parseDuration } from '../../structs/duration.js';
import type { Variable } from '../../structs/variable.js';
import { ApiError, type ApiClient } from '../api-client.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { addApiFlags, apiClient, runApiCommand, type ApiFlags } from './api-command.js';
import { specFormat, variableArguments, withSpecNamespace } from '../var-spec.js';

interface VarLockFlags extends ApiFlags {
  in?: string;
  ttl?: string;
  delay?: string;
  maxRetry?: string;
  backoff?: string;
  shell?: string | boolean;
  earlyReturn?: boolean;
}

const varPath = (p: string): string => `/v1/var/${p.replace(/^\/+|\/+$/g, '').split('/').map(encodeURIComponent).join('/')}`;

function durationMs(flag: string, raw: string): number {
  try {
    return parseDuration(raw) / 1e6;
  } catch {
    throw new CliUsageError(`Invalid ${flag}: ${JSON.stringify(raw)} is not a duration`);
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** Runs `call`, retrying up to `maxRetry` times while the agent answers 5xx or is unreachable. */
async function withRetries<T>(maxRetry: number, call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const transient = err instanceof ApiError && (err.status === 0 || err.status >= 500);
      if (!transient || attempt >= maxRetry) throw err;
      await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** attempt, 5000)));
    }
  }
}

function startChild(args: string[], useShell: boolean, env: NodeJS.ProcessEnv): ChildProcess {
  if (useShell) return spawn(env['SHELL'] || '/bin/sh', ['-c', args.join(' ')], { stdio: 'inherit', env });
  return spawn(args[0]!, args.slice(1), { stdio: 'inherit', env });
}

/** Holds the lock around the child; the exit code. */
async function lockAndRun(ctx: CliContext, api: ApiClient, path: string, items: Record<string, string> | undefined, child: string[], opts: VarLockFlags): Promise<number> {
  const ttl = opts.ttl ?? '15s';
  const delay = opts.delay ?? '15s';
  const ttlMs = durationMs('TTL', ttl);
  durationMs('Lock Delay', delay);
  const backoffMs = opts.backoff !== undefined ? durationMs('backoff', opts.backoff) : ttlMs * 1.1;
  const maxRetry = opts.maxRetry !== undefined ? Number(opts.maxRetry) : 5;
  if (!Number.isInteger(maxRetry) || maxRetry < 0) throw new CliUsageError(`invalid -max-retry ${JSON.stringify(opts.maxRetry)}: want a non-negative integer`);
  const useShell = opts.shell === undefined || opts.shell === true || opts.shell === 'true';
  const verbose = (msg: string): void => void (opts.verbose && ctx.stderr.write(`${msg}\n`));
  const url = varPath(path);
  const stop = new AbortController();

  // Acquire, waiting while another holder has the lock.
  let lockId = '';
  verbose('Attempting to acquire lock');
  while (lockId === '') {
    try {
      const { body } = await withRetries(maxRetry, () => api.put<Variable>(url, { Path: path, ...(items ? { Items: items } : {}), Lock: { TTL: formatDuration(parseDuration(ttl)), LockDelay: formatDuration(parseDuration(delay)) } }, { 'lock-acquire': '' }));
      lockId = body.Lock?.ID ?? '';
      if (lockId === '') throw new ApiError(500, 'the agent answered the acquire without a lock ID', 'PUT', url);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
      if (opts.earlyReturn) {
        verbose('The lock is held elsewhere; returning early');
        return ExitCode.Ok;
      }
      verbose(`The lock is held elsewhere; trying again in ${formatDuration(backoffMs * 1e6)}`);
      await sleep(backoffMs, stop.signal);
    }
  }

  verbose(`Variable locked, ready to execute: ${child.join(' ')}`);
  const proc = startChild(child, useShell, ctx.env);
  const forward = (sig: NodeJS.Signals) => () => void proc.kill(sig);
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  let lockError: string | null = null;
  const renewer = setInterval(() => {
    withRetries(maxRetry, () => api.put(url, { Path: path, Lock: { ID: lockId } }, { 'lock-renew': '' })).catch((err: unknown) => {
      // Lost (or unreachable for good): the child must not go on believing it holds the lock.
      lockError = `error renewing the lease: ${(err as Error).message}`;
      proc.kill('SIGTERM');
    });
  }, Math.max(1, ttlMs * 0.7));
  const exit = await new Promise<{ code: number | null; error?: Error }>((resolve) => {
    proc.once('error', (error) => resolve({ code: null, error }));
    proc.once('exit', (code) => resolve({ code }));
  });
  clearInterval(renewer);
  process.off('SIGINT', onInt);
  process.off('SIGTERM', onTerm);

  verbose('Releasing the lock');
  let releaseError: string | null = null;
  if (lockError === null) {
    await withRetries(maxRetry, () => api.put(url, { Path: path, Lock: { ID: lockId } }, { 'lock-release': '' })).catch((err: unknown) => {
      releaseError = `lock release: ${(err as Error).message}`;
    });
  }
  const problems = [
    lockError,
    exit.error ? `error executing protected function ${exit.error.message}` : exit.code !== 0 ? `error executing protected function exit status ${exit.code ?? 'signal'}` : null,
    releaseError,
  ].filter((p): p is string => p !== null);
  if (problems.length > 0) {
    ctx.stderr.write(`Lock error: ${problems.join('\n')}\n`);
    return ExitCode.Error;
  }
  return ExitCode.Ok;
}

/** Registers `var lock` on the `var` command. */
export function registerVarLock(v: Command, ctx: CliContext): void {
  addApiFlags(
    v
      .command('lock')
      .description('Put a lock on a variable and run a child command while holding it')
      .argument('<path-or-spec>', 'the variable to lock, or a specification (@file, - for stdin) that names it')
      .argument('<args...>', '[<specification>] and the command to run while the lock is held')
      .option('--in <format>', 'format of a specification on stdin or in a file without a .hcl/.json extension: hcl or json (default json)')
      .option('--ttl <duration>', 'TTL of the lock (default 15s)')
      .option('--delay <duration>', 'how long the variable stays unlockable after a lease expires (default 15s)')
      .option('--max-retry <n>', 'retries of a call the agent answered with a 5xx (default 5)')
      .option('--backoff <duration>', 'wait between acquire attempts while the lock is held elsewhere (default 1.1 × TTL)')
      .option('--early-return', 'return at once when the lock is held elsewhere')
      .option('--shell [bool]', 'run the child through $SHELL -c (default true)')
      .option('--verbose', 'report progress on stderr'),
  ).action(async (first: string, more: string[], opts: VarLockFlags) => {
    const { path, spec, rest: child } = await variableArguments([first, ...more], specFormat(opts.in), ctx.cwd);
    if (child.length === 0) throw new CliUsageError('Not enough arguments (expected a command to run while the lock is held)');
    await runApiCommand(ctx, 'locking variable', () => lockAndRun(ctx, apiClient(ctx, withSpecNamespace(ctx.env, opts, spec).flags), path, spec?.Items, child, opts));
  });
}
