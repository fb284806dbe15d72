/**
 * `caravan job action [-job J] [-alloc A | -group G -task T] [-i] [-t] NAME` (alias `caravan
 * action`), as Nomad 1.7's `nomad action`: runs the task `action` block NAME of job J in a
 * running allocation over the action websocket (/v1/job/:job/action), printing its output and
 * exiting with its exit code. Without -alloc, a running allocation of the group is picked at
 * random, as Nomad does.
 */
import type { Command } from 'commander';
import type { AllocListStub, Allocation } from '../../structs/alloc.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { cliTlsConnectOptions } from '../cli-tls.js';
import { resolveGlobalOptions } from '../global-options.js';
import type { ApiClient } from '../api-client.js';
import { addApiFlags, apiClient, PrefixError, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import { ExecSessionError, runExecSession } from './alloc-exec-session.js';
import { localIo, pickTask } from './alloc-exec.js';
import { resolveJobId } from './job-lookup.js';

interface ActionFlags extends ApiFlags {
  job?: string;
  alloc?: string;
  group?: string;
  task?: string;
  i?: boolean;
  t?: boolean;
}

/**
 * A running allocation of `group` in job `jobId`, chosen at random as Nomad's getRandomJobAlloc
 * does; PrefixError naming the job when it has none.
 */
async function randomRunningAlloc(api: ApiClient, jobId: string, group: string): Promise<string> {
  const { body } = await api.get<AllocListStub[]>(`/v1/job/${encodeURIComponent(jobId)}/allocations`);
  if (body.length === 0) throw new PrefixError(`Error fetching allocations: job "${jobId}" doesn't exist or it has no allocations`);
  const running = body.filter((a) => a.ClientStatus === 'running' && a.TaskGroup === group);
  if (running.length === 0) throw new PrefixError(`Error fetching allocations: job "${jobId}" doesn't have any running allocations in group "${group}"`);
  return running[Math.floor(Math.random() * running.length)]!.ID;
}

/** Registers `job action`. */
export const jobActionCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('action')
        .description('Run a predefined action from a task of a job')
        .argument('<action>', 'the name of the action, as declared in the task')
        .option('--job <id>', 'the job the action is declared in (required)')
        .option('--alloc <id>', 'the allocation to run it in (default: a running allocation of -group)')
        .option('--group <name>', 'the group of the task (required without -alloc)')
        .option('--task <name>', 'the task the action is declared in (required without -alloc)')
        .option('-i', 'forward stdin; -i=false to disable', true)
        .option('-t', 'allocate a pseudo-terminal (default: when stdin is a terminal)'),
    ).action(async (action: string, opts: ActionFlags) => {
      if (!opts.job) throw new CliUsageError('A job ID is required');
      if (opts.t && opts.i === false) throw new CliUsageError('-i must be enabled if running with tty');
      if (!opts.alloc) {
        if (!opts.group) throw new CliUsageError('A group name is required if no allocation is provided');
        if (!opts.task) throw new CliUsageError('A task name is required if no allocation is provided');
      }
      await runApiCommand(ctx, 'running action', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, opts.job!);
        const allocId = opts.alloc
          ? await resolveIdPrefix(api, '/v1/allocations', 'allocation', opts.alloc)
          : await randomRunningAlloc(api, jobId, opts.group!);
        const { body: alloc } = await api.get<Allocation>(`/v1/allocation/${encodeURIComponent(allocId)}`);
        const task = pickTask(alloc, opts.task);
        if (!Object.hasOwn(alloc.TaskStates ?? {}, task)) throw new PrefixError(`Could not find task named: ${task}, found:\n* ${Object.keys(alloc.TaskStates ?? {}).join('\n* ')}`);
        const tty = opts.t ?? Boolean(process.stdin.isTTY);
        const g = resolveGlobalOptions(opts, ctx.env);
        try {
          return await runExecSession(
            { address: g.address, token: g.token, allocId, task, command: [], tty, tls: cliTlsConnectOptions(g.tls), action: { jobId, name: action, group: alloc.TaskGroup } },
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
