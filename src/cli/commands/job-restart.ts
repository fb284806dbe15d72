/**
 * `caravan job restart [options] JOB`: restarts a job's running allocations in batches, as
 * Nomad's `job restart` does — their running tasks in place (or every task with `-all-tasks`,
 * or only `-task NAME`), or with `-reschedule` by stopping each so the scheduler places a
 * replacement, waiting for it to run. A batch waits for the one before; `-batch-wait` pauses
 * between batches, or with `ask` asks on the terminal before each next batch (yes, no — the
 * restart is canceled —, or a duration to wait from then on); an active deployment stops the
 * restart; after a failed batch `-on-error fail` stops and `ask` asks whether to go on (`-yes`
 * answers yes). `ask` needs an interactive terminal, as in Nomad.
 */
import type { Command } from 'commander';
import type { AllocListStub, Allocation } from '../../structs/alloc.js';
import type { Deployment } from '../../structs/deployment.js';
import { parseDuration } from '../../structs/duration.js';
import type { Job } from '../../structs/job.js';
import type { ApiClient } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { CliUsageError, ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { short } from '../format/columns.js';
import { addApiFlags, apiClient, runApiCommand, type ApiFlags } from './api-command.js';
import { collect } from './job-file-flags.js';
import { askLine, canAsk } from '../terminal-prompt.js';
import { resolveJobId } from './job-lookup.js';

interface RestartFlags extends ApiFlags {
  allTasks?: boolean;
  batchSize: string;
  batchWait: string;
  group: string[];
  task: string[];
  /** False with -no-shutdown-delay (commander's negated flag). */
  shutdownDelay?: boolean;
  onError: string;
  reschedule?: boolean;
  yes?: boolean;
}

interface RestartPlan {
  batchSize: number;
  batchSizePercent: boolean;
  batchWaitMs: number;
  /** The wait as the user gave it, for messages. */
  batchWaitText: string;
  /** -batch-wait ask: ask before each next batch (until an answer gives a wait). */
  batchWaitAsk: boolean;
}

const TERMINAL_DEPLOYMENT = new Set(['failed', 'successful', 'cancelled']);
/** How long a rescheduled allocation's replacement may take to run before the restart gives up on it. */
const REPLACEMENT_TIMEOUT_MS = 5 * 60_000;

function parseFlags(opts: RestartFlags): RestartPlan {
  const m = /^(\d+)%?$/.exec(opts.batchSize);
  if (!m) throw new CliUsageError(`Invalid -batch-size value "${opts.batchSize}": batch size must be an integer or a percentage`);
  const batchSize = Number(m[1]);
  if (batchSize === 0) throw new CliUsageError(`Invalid -batch-size value "${opts.batchSize}": number value must be greater than zero`);
  const batchWaitAsk = opts.batchWait.toLowerCase() === 'ask';
  if (batchWaitAsk && !canAsk()) throw new CliUsageError('Invalid -batch-wait value "ask": "ask" cannot be used when terminal is not interactive');
  let batchWaitMs = 0;
  if (!batchWaitAsk) {
    try {
      batchWaitMs = parseDuration(opts.batchWait) / 1e6;
    } catch (err) {
      throw new CliUsageError(`Invalid -batch-wait value "${opts.batchWait}": ${(err as Error).message}`);
    }
  }
  if (opts.onError === 'ask') {
    if (!opts.yes && !canAsk()) throw new CliUsageError('Invalid -on-error value "ask": "ask" cannot be used when terminal is not interactive');
  } else if (opts.onError !== 'fail') {
    throw new CliUsageError(`Invalid -on-error value "${opts.onError}": valid options are "ask" and "fail"`);
  }
  if (opts.allTasks && opts.task.length > 0) throw new CliUsageError('The -all-tasks option cannot be used with -task');
  if (opts.reschedule && opts.task.length > 0) throw new CliUsageError('The -reschedule option cannot be used with -task');
  return { batchSize, batchSizePercent: opts.batchSize.endsWith('%'), batchWaitMs, batchWaitText: opts.batchWait, batchWaitAsk };
}

/**
 * Asks whether to restart the next batch until the answer is valid: yes (or nothing), no, or a
 * duration — then the wait between batches from now on, and no more questions. False for no
 * and for Ctrl-C.
 */
async function proceedWithNextBatch(plan: RestartPlan, say: (s: string) => void): Promise<boolean> {
  for (;;) {
    const line = await askLine(`==> ${now()}: Proceed with next batch? [Y/n/<duration>]`);
    if (line === null) return false;
    const answer = line.trim().toLowerCase();
    if (answer === '' || answer === 'y' || answer === 'yes') return true;
    if (answer === 'n' || answer === 'no') return false;
    try {
      plan.batchWaitMs = parseDuration(line.trim()) / 1e6;
    } catch {
      say(`    ${now()}: Invalid option "${line.trim()}"`);
      continue;
    }
    plan.batchWaitText = line.trim();
    plan.batchWaitAsk = false;
    say(`==> ${now()}: Proceeding restarts with new wait time of ${plan.batchWaitText}`);
    return true;
  }
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

function tasksOf(job: Job | undefined, group: string): string[] {
  return job?.TaskGroups.find((g) => g.Name === group)?.Tasks.map((t) => t.Name) ?? [];
}

async function activeDeployment(api: ApiClient, jobId: string): Promise<Deployment | undefined> {
  const { body } = await api.get<Deployment[]>(`/v1/job/${encodeURIComponent(jobId)}/deployments`);
  return body.find((d) => !TERMINAL_DEPLOYMENT.has(d.Status));
}

/** Stops `alloc` and waits until the allocation that replaces it runs. */
async function reschedule(api: ApiClient, alloc: AllocListStub, noShutdownDelay: boolean, say: (s: string) => void, verbose: boolean): Promise<void> {
  await api.put(`/v1/allocation/${alloc.ID}/stop`, undefined, noShutdownDelay ? { no_shutdown_delay: 'true' } : {});
  const deadline = Date.now() + REPLACEMENT_TIMEOUT_MS;
  let index = 0;
  let next = '';
  while (Date.now() < deadline) {
    const { body, index: at } = await api.get<Allocation>(`/v1/allocation/${alloc.ID}`, { index: String(index), wait: '10s' });
    index = at;
    if (body.NextAllocation) {
      next = body.NextAllocation;
      break;
    }
  }
  if (!next) throw new Error(`allocation "${short(alloc.ID, verbose)}" was not replaced in time`);
  say(`    ${now()}: Rescheduled allocation "${short(alloc.ID, verbose)}" on node "${short(alloc.NodeID, verbose)}", waiting for replacement "${short(next, verbose)}" to be running`);
  index = 0;
  while (Date.now() < deadline) {
    const { body, index: at } = await api.get<Allocation>(`/v1/allocation/${next}`, { index: String(index), wait: '10s' });
    index = at;
    if (body.ClientStatus === 'running') return;
    if (body.ClientStatus === 'failed' || body.ClientStatus === 'lost' || body.ClientStatus === 'complete') {
      throw new Error(`replacement allocation "${short(next, verbose)}" is "${body.ClientStatus}"`);
    }
  }
  throw new Error(`replacement allocation "${short(next, verbose)}" did not run in time`);
}

async function restartOne(api: ApiClient, alloc: AllocListStub, job: Job | undefined, opts: RestartFlags, say: (s: string) => void): Promise<void> {
  const id = short(alloc.ID, opts.verbose);
  if (opts.reschedule) {
    say(`    ${now()}: Rescheduling allocation "${id}" for group "${alloc.TaskGroup}"`);
    return reschedule(api, alloc, opts.shutdownDelay === false, say, opts.verbose === true);
  }
  const path = `/v1/client/allocation/${alloc.ID}/restart`;
  if (opts.task.length > 0) {
    for (const task of opts.task.filter((t) => tasksOf(job, alloc.TaskGroup).includes(t))) {
      say(`    ${now()}: Restarting task "${task}" in allocation "${id}" for group "${alloc.TaskGroup}"`);
      await api.put(path, { TaskName: task });
    }
    return;
  }
  say(`    ${now()}: Restarting ${opts.allTasks ? 'all' : 'running'} tasks in allocation "${id}" for group "${alloc.TaskGroup}"`);
  await api.put(path, { AllTasks: opts.allTasks === true });
}

export const jobRestartCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('restart')
        .description("Restart or reschedule a job's allocations in batches")
        .argument('<job>', 'job ID or prefix')
        .option('--all-tasks', 'restart every task, not only the running ones')
        .option('--batch-size <n>', 'allocations per batch: a number or a percentage', '1')
        .option('--batch-wait <duration>', 'pause between batches', '0s')
        .option('--group <name>', 'only allocations of this group (repeatable)', collect, [])
        .option('--task <name>', 'only this task (repeatable)', collect, [])
        .option('--no-shutdown-delay', "with -reschedule, ignore the tasks' shutdown delay")
        .option('--on-error <mode>', 'what to do when a batch fails: ask or fail', 'ask')
        .option('--reschedule', 'stop each allocation and wait for its replacement instead of restarting in place')
        .option('--yes', 'answer yes to every question')
        .option('--verbose', 'show full IDs and skipped allocations'),
    ).action(async (prefix: string, opts: RestartFlags) => {
      const plan = parseFlags(opts);
      await runApiCommand(ctx, 'restarting job', async () => {
        const api = apiClient(ctx, opts);
        const say = (s: string): void => void ctx.stdout.write(`${s}\n`);
        const jobId = await resolveJobId(api, prefix);
        const { body: versions } = await api.get<{ Versions: Job[] }>(`/v1/job/${encodeURIComponent(jobId)}/versions`);
        const byVersion = new Map(versions.Versions.map((j) => [j.Version, j]));
        const { body: stubs } = await api.get<AllocListStub[]>(`/v1/job/${encodeURIComponent(jobId)}/allocations`);
        const targets = stubs.filter((a) => {
          const skip = (why: string): boolean => {
            if (opts.verbose) say(`    ${now()}: Skipping allocation "${short(a.ID, true)}" because ${why}`);
            return false;
          };
          if (a.DesiredStatus !== 'run' || a.ClientStatus !== 'running') return skip(`desired status is "${a.DesiredStatus}" and client status is "${a.ClientStatus}"`);
          if (opts.group.length > 0 && !opts.group.includes(a.TaskGroup)) return skip("it doesn't have any of requested groups");
          if (opts.task.length > 0 && !opts.task.some((t) => tasksOf(byVersion.get(a.JobVersion), a.TaskGroup).includes(t))) return skip("it doesn't have any of requested tasks");
          return true;
        });
        if (targets.length === 0) {
          say('No allocations to restart');
          return ExitCode.Ok;
        }
        targets.sort((a, b) => a.CreateIndex - b.CreateIndex);
        const batchSize = plan.batchSizePercent ? Math.ceil((targets.length * plan.batchSize) / 100) : plan.batchSize;
        say(`==> ${now()}: Restarting ${targets.length} allocation${targets.length === 1 ? '' : 's'}`);
        const errors: string[] = [];
        for (let start = 0; start < targets.length; start += batchSize) {
          const active = await activeDeployment(api, jobId);
          if (active) {
            errors.push(`Deployment "${short(active.ID, opts.verbose)}" is "${active.Status}"`);
            break;
          }
          const batch = targets.slice(start, start + batchSize);
          if (batchSize > 1) say(`==> ${now()}: Restarting ${ordinal(start / batchSize + 1)} batch of ${batch.length} allocations`);
          const results = await Promise.allSettled(batch.map((a) => restartOne(api, a, byVersion.get(a.JobVersion), opts, say)));
          const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`${now()}: Error restarting allocation "${short(batch[i]!.ID, opts.verbose)}": ${(r.reason as Error).message}`] : []));
          errors.push(...failed);
          const last = start + batchSize >= targets.length;
          if (last) break;
          if (failed.length > 0 && (opts.onError === 'fail' || (!opts.yes && !(await proceedWithNextBatch(plan, say))))) {
            say(`==> ${now()}: Stopping job restart due to error`);
            break;
          }
          if (plan.batchWaitAsk && !(await proceedWithNextBatch(plan, say))) {
            say('\nJob restart canceled.');
            return ExitCode.Ok;
          }
          if (plan.batchWaitMs > 0) {
            say(`==> ${now()}: Waiting ${plan.batchWaitText} before restarting the next batch`);
            await new Promise((r) => setTimeout(r, plan.batchWaitMs));
          }
        }
        if (errors.length > 0) {
          say(`==> ${now()}: Job restart finished with errors`);
          ctx.stderr.write(`\n${errors.length} error${errors.length === 1 ? '' : 's'} occurred while restarting job:\n${errors.map((e) => `* ${e}`).join('\n')}\n`);
          return ExitCode.Error;
        }
        say(`==> ${now()}: Job restart finished`);
        say('\nJob restarted successfully!');
        return ExitCode.Ok;
      });
    });
  },
};

function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${s}`;
}
