/**
 * The `caravan` command. Command modules (src/cli/commands/<group>-<verb>.ts) each export a
 * CommandModule; COMMANDS lists them — adding a command is one line there. Nomad's single-dash
 * long flags are accepted (argv is normalised for commander). Exit codes: 0 ok, 1 error or
 * invalid input, 2 usage.
 */
import { expandTopLevelAlias, shortcutsHelp } from './top-level-aliases.js';
import { jobActionCommands } from './commands/job-actions.js';
import { jobScalingEventsCommand } from './commands/job-scaling-events.js';
import { systemCommands } from './commands/system-commands.js';
import { aclCommands } from './commands/acl-commands.js';
import { operatorSchedulerCommands } from './commands/operator-scheduler.js';
import { operatorAutopilotCommands } from './commands/operator-autopilot.js';
import { scalingPolicyCommands } from './commands/scaling-policy-commands.js';
import { namespaceCommands } from './commands/namespace-commands.js';
import { Command, CommanderError } from 'commander';
import { CliRunError, CliUsageError, ExitCode, type CliContext } from './cli-context.js';
import type { CommandModule } from './command-registry.js';
import { agentCommand } from './commands/agent.js';
import { allocStatusCommand } from './commands/alloc-status.js';
import { allocExecCommand } from './commands/alloc-exec.js';
import { jobActionCommand } from './commands/job-action.js';
import { allocFsCommand } from './commands/alloc-fs.js';
import { allocLogsCommand } from './commands/alloc-logs.js';
import { allocRestartCommand } from './commands/alloc-restart.js';
import { allocSignalCommand } from './commands/alloc-signal.js';
import { allocStopCommand } from './commands/alloc-stop.js';
import { evalCommands } from './commands/eval-commands.js';
import { evalDeleteCommand } from './commands/eval-delete.js';
import { jobTagCommands } from './commands/job-tag.js';
import { monitorCommand } from './commands/monitor.js';
import { jobHistoryCommand } from './commands/job-history.js';
import { jobInspectCommand } from './commands/job-inspect.js';
import { jobPlanCommand } from './commands/job-plan.js';
import { jobRunCommand } from './commands/job-run.js';
import { jobStatusCommand } from './commands/job-status.js';
import { jobStopCommand } from './commands/job-stop.js';
import { jobDispatchCommand } from './commands/job-dispatch.js';
import { jobPeriodicCommand } from './commands/job-periodic.js';
import { nodeCommands } from './commands/node-commands.js';
import { nodeDrainCommand } from './commands/node-drain.js';
import { nodeMetaCommands } from './commands/node-meta.js';
import { nodePoolCommands } from './commands/node-pool.js';
import { volumeCommands } from './commands/volume-commands.js';
import { nodeIntroCommands } from './commands/node-intro.js';
import { varCommands } from './commands/var-commands.js';
import { operatorSnapshotCommands } from './commands/operator-snapshot.js';
import { allocChecksCommand } from './commands/alloc-checks.js';
import { serviceCommands } from './commands/service-commands.js';
import { deploymentCommands } from './commands/deployment-commands.js';
import { serverMembersCommand } from './commands/server-members.js';
import { operatorRaftCommands } from './commands/operator-raft.js';
import { operatorRootKeyringCommands } from './commands/operator-root-keyring.js';
import { statusCommand } from './commands/status.js';
import { jobValidateCommand } from './commands/job-validate.js';
import { CARAVAN_VERSION } from '../structs/version.js';
import { versionCommand } from './commands/version.js';
import { jobAllocsCommand } from './commands/job-allocs.js';
import { jobDeploymentsCommand } from './commands/job-deployments.js';
import { jobEvalCommand } from './commands/job-eval.js';
import { jobStartCommand } from './commands/job-start.js';
import { jobRestartCommand } from './commands/job-restart.js';
import { jobInitCommand } from './commands/job-init.js';
import { agentInfoCommand } from './commands/agent-info.js';
import { operatorApiCommand } from './commands/operator-api.js';
import { operatorMetricsCommand } from './commands/operator-metrics.js';
import { nodeConfigCommand } from './commands/node-config.js';
import { operatorGossipKeyringCommands } from './commands/operator-gossip-keyring.js';
import { operatorDebugCommand } from './commands/operator-debug.js';
import { normalizeArgv } from './normalize-argv.js';
import { rewriteGoBoolFlags } from './go-bool-flags.js';

/** Every command of the CLI, in help order. Add new command modules here. */
export const COMMANDS: readonly CommandModule[] = [
  versionCommand,
  jobValidateCommand,
  jobRunCommand,
  agentCommand,
  jobPlanCommand,
  jobStatusCommand,
  jobStopCommand,
  jobDispatchCommand,
  jobPeriodicCommand,
  jobInspectCommand,
  jobHistoryCommand,
  jobAllocsCommand,
  jobDeploymentsCommand,
  jobEvalCommand,
  jobStartCommand,
  jobRestartCommand,
  jobInitCommand,
  evalCommands,
  evalDeleteCommand,
  nodeCommands,
  nodeDrainCommand,
  nodeMetaCommands,
  nodePoolCommands,
  volumeCommands,
  nodeIntroCommands,
  nodeConfigCommand,
  varCommands,
  operatorSnapshotCommands,
  deploymentCommands,
  allocStatusCommand,
  allocExecCommand,
  allocLogsCommand,
  allocFsCommand,
  allocRestartCommand,
  allocSignalCommand,
  allocStopCommand,
  allocChecksCommand,
  serviceCommands,
  statusCommand,
  serverMembersCommand,
  jobActionCommands,
  jobActionCommand,
  jobScalingEventsCommand,
  jobTagCommands,
  monitorCommand,
  systemCommands,
  operatorSchedulerCommands,
  operatorAutopilotCommands,
  scalingPolicyCommands,
  namespaceCommands,
  operatorRaftCommands,
  operatorGossipKeyringCommands,
  operatorDebugCommand,
  operatorRootKeyringCommands,
  operatorApiCommand,
  operatorMetricsCommand,
  agentInfoCommand,
  aclCommands,
];

/** Builds the commander program with every command registered against `ctx`. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('caravan')
    .description('Caravan: a Nomad-compatible workload orchestrator')
    .version(CARAVAN_VERSION, '-v, --version', 'print the version')
    .showHelpAfterError('(run with -help for usage)')
    // Nomad (and the README) write long flags with one dash; both spellings are accepted (normalize-argv.ts).
    .configureHelp({ optionTerm: (option) => option.flags.replace(/(^|[\s,])--/g, '$1-') })
    .addHelpText('after', shortcutsHelp())
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      // commander names flags as it parsed them (`--nope`); say them as the user wrote them, Nomad's way.
      writeErr: (s) => ctx.stderr.write(s.replace(/'--([\w-]+)'/g, "'-$1'")),
    });
  for (const mod of COMMANDS) mod.register(program, ctx);
  return program;
}

/** Exit code for a commander error: help/version are not failures; the rest are usage errors. */
function commanderExitCode(err: CommanderError): number {
  switch (err.code) {
    case 'commander.helpDisplayed':
    case 'commander.version':
      return ExitCode.Ok;
    case 'commander.help':
    case 'commander.executeSubCommandAsync':
      return err.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    default:
      return ExitCode.Usage;
  }
}

/**
 * Runs the CLI on `argv` (process.argv: node, script, then arguments) and resolves to the
 * exit code. `io` overrides streams, environment and cwd (tests run main in-process).
 */
export async function main(argv: string[], io: Partial<Omit<CliContext, 'exitCode'>> = {}): Promise<number> {
  const ctx: CliContext = {
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    env: io.env ?? process.env,
    cwd: io.cwd ?? process.cwd(),
    exitCode: ExitCode.Ok,
  };
  const args = normalizeArgv(expandTopLevelAlias(argv.slice(2)));
  const program = buildProgram(ctx);
  if (args.length === 0) {
    ctx.stderr.write(program.helpInformation());
    return ExitCode.Usage;
  }
  try {
    await program.parseAsync(rewriteGoBoolFlags(program, args), { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) return commanderExitCode(err);
    if (err instanceof CliUsageError) {
      ctx.stderr.write(`Error: ${err.message}\n`);
      return ExitCode.Usage;
    }
    if (err instanceof CliRunError) {
      ctx.stderr.write(`${err.message}\n`);
      return ExitCode.Error;
    }
    throw err;
  }
}
