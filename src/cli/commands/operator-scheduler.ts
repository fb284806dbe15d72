/**
 * `caravan operator scheduler get-config` and `set-config`: read and change the scheduler
 * configuration. set-config changes only the flags given (it reads the current configuration
 * first), with `-check-index` for check-and-set, as Nomad's command.
 */
import type { Command } from 'commander';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatKV } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import type { SchedulerConfiguration } from '../../structs/scheduler-config.js';

interface SetFlags extends ApiFlags {
  schedulerAlgorithm?: string;
  memoryOversubscription?: string;
  rejectJobRegistration?: string;
  pauseEvalBroker?: string;
  preemptBatchScheduler?: string;
  preemptServiceScheduler?: string;
  preemptSysbatchScheduler?: string;
  preemptSystemScheduler?: string;
  checkIndex?: string;
}

function boolFlag(name: string, raw: string | undefined, current: boolean): boolean {
  if (raw === undefined) return current;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new CliUsageError(`-${name} must be true or false, got ${JSON.stringify(raw)}`);
}

function printConfig(ctx: CliContext, c: SchedulerConfiguration): void {
  ctx.stdout.write(
    formatKV([
      ['Scheduler Algorithm', c.SchedulerAlgorithm],
      ['Memory Oversubscription', String(c.MemoryOversubscriptionEnabled)],
      ['Reject Job Registration', String(c.RejectJobRegistration)],
      ['Pause Eval Broker', String(c.PauseEvalBroker)],
    ]) +
      '\nPreemption Config\n' +
      formatKV([
        ['System Scheduler Enabled', String(c.PreemptionConfig.SystemSchedulerEnabled)],
        ['SysBatch Scheduler Enabled', String(c.PreemptionConfig.SysBatchSchedulerEnabled)],
        ['Service Scheduler Enabled', String(c.PreemptionConfig.ServiceSchedulerEnabled)],
        ['Batch Scheduler Enabled', String(c.PreemptionConfig.BatchSchedulerEnabled)],
      ]),
  );
}

const PATH = '/v1/operator/scheduler/configuration';

/** Registers `operator scheduler get-config|set-config`. */
export const operatorSchedulerCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const scheduler = commandGroup(program, 'operator').command('scheduler').description('Read and change the scheduler configuration');
    addApiFlags(scheduler.command('get-config').description('Show the scheduler configuration')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying scheduler configuration', async () => {
        const { body } = await apiClient(ctx, opts).get<{ SchedulerConfig: SchedulerConfiguration }>(PATH);
        if (opts.json) printJson(ctx, body.SchedulerConfig);
        else printConfig(ctx, body.SchedulerConfig);
        return ExitCode.Ok;
      });
    });
    addApiFlags(
      scheduler
        .command('set-config')
        .description('Change the scheduler configuration')
        .option('--scheduler-algorithm <algo>', 'binpack or spread')
        .option('--memory-oversubscription <bool>', 'true or false')
        .option('--reject-job-registration <bool>', 'true or false')
        .option('--pause-eval-broker <bool>', 'true or false')
        .option('--preempt-batch-scheduler <bool>', 'true or false')
        .option('--preempt-service-scheduler <bool>', 'true or false')
        .option('--preempt-sysbatch-scheduler <bool>', 'true or false')
        .option('--preempt-system-scheduler <bool>', 'true or false')
        .option('--check-index <index>', 'only apply when the configuration is at this ModifyIndex'),
    ).action(async (opts: SetFlags) => {
      if (opts.schedulerAlgorithm !== undefined && opts.schedulerAlgorithm !== 'binpack' && opts.schedulerAlgorithm !== 'spread') {
        throw new CliUsageError(`-scheduler-algorithm must be binpack or spread, got ${JSON.stringify(opts.schedulerAlgorithm)}`);
      }
      if (opts.checkIndex !== undefined && !/^\d+$/.test(opts.checkIndex)) throw new CliUsageError('-check-index must be a non-negative integer');
      await runApiCommand(ctx, 'updating scheduler configuration', async () => {
        const api = apiClient(ctx, opts);
        const { body } = await api.get<{ SchedulerConfig: SchedulerConfiguration }>(PATH);
        const c = body.SchedulerConfig;
        const next = {
          SchedulerAlgorithm: opts.schedulerAlgorithm ?? c.SchedulerAlgorithm,
          MemoryOversubscriptionEnabled: boolFlag('memory-oversubscription', opts.memoryOversubscription, c.MemoryOversubscriptionEnabled),
          RejectJobRegistration: boolFlag('reject-job-registration', opts.rejectJobRegistration, c.RejectJobRegistration),
          PauseEvalBroker: boolFlag('pause-eval-broker', opts.pauseEvalBroker, c.PauseEvalBroker),
          PreemptionConfig: {
            BatchSchedulerEnabled: boolFlag('preempt-batch-scheduler', opts.preemptBatchScheduler, c.PreemptionConfig.BatchSchedulerEnabled),
            ServiceSchedulerEnabled: boolFlag('preempt-service-scheduler', opts.preemptServiceScheduler, c.PreemptionConfig.ServiceSchedulerEnabled),
            SysBatchSchedulerEnabled: boolFlag('preempt-sysbatch-scheduler', opts.preemptSysbatchScheduler, c.PreemptionConfig.SysBatchSchedulerEnabled),
            SystemSchedulerEnabled: boolFlag('preempt-system-scheduler', opts.preemptSystemScheduler, c.PreemptionConfig.SystemSchedulerEnabled),
          },
        };
        const { body: res } = await api.put<{ Updated: boolean }>(PATH, next, { cas: opts.checkIndex });
        if (!res.Updated) {
          ctx.stderr.write('Scheduler configuration update failed: the check index did not match\n');
          return ExitCode.Error;
        }
        ctx.stdout.write('Scheduler configuration updated!\n');
        return ExitCode.Ok;
      });
    });
  },
};
