/**
 * `caravan operator autopilot get-config|set-config|health`, as Nomad's commands: get-config
 * prints the configuration as `Key = value` lines; set-config reads the current configuration,
 * changes only the flags given and writes it back with check-and-set on the ModifyIndex it read
 * (so a concurrent change is not overwritten); health prints the servers' health.
 */
import type { Command } from 'commander';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { parseGoBool } from '../go-bool-flags.js';
import { DurationParseError, parseDuration } from '../../structs/duration.js';
import type { AutopilotConfigurationJson } from '../../structs/autopilot-config.js';
import type { OperatorHealthReply } from '../../structs/operator-health.js';

const CONFIG_PATH = '/v1/operator/autopilot/configuration';

interface SetFlags extends ApiFlags {
  cleanupDeadServers?: string;
  maxTrailingLogs?: string;
  minQuorum?: string;
  lastContactThreshold?: string;
  serverStabilizationTime?: string;
  enableRedundancyZones?: string;
  disableUpgradeMigration?: string;
  enableCustomUpgrades?: string;
}

function boolFlag(name: string, raw: string | undefined, current: boolean): boolean {
  return raw === undefined ? current : parseGoBool(name, raw);
}

function countFlag(name: string, raw: string | undefined, current: number): number {
  if (raw === undefined) return current;
  if (!/^\d+$/.test(raw)) throw new CliUsageError(`invalid value "${raw}" for -${name}: want a non-negative whole number`);
  return Number(raw);
}

function durationFlag(name: string, raw: string | undefined, current: string): string {
  if (raw === undefined) return current;
  try {
    if (parseDuration(raw) < 0) throw new DurationParseError(raw);
  } catch (err) {
    if (err instanceof DurationParseError) throw new CliUsageError(`invalid value "${raw}" for -${name}: want a duration such as "200ms" or "10s"`);
    throw err;
  }
  return raw;
}

function printConfig(ctx: CliContext, c: AutopilotConfigurationJson): void {
  const lines = [
    `CleanupDeadServers = ${c.CleanupDeadServers}`,
    `LastContactThreshold = ${c.LastContactThreshold}`,
    `MaxTrailingLogs = ${c.MaxTrailingLogs}`,
    `MinQuorum = ${c.MinQuorum}`,
    `ServerStabilizationTime = ${c.ServerStabilizationTime}`,
    `EnableRedundancyZones = ${c.EnableRedundancyZones}`,
    `DisableUpgradeMigration = ${c.DisableUpgradeMigration}`,
    `EnableCustomUpgrades = ${c.EnableCustomUpgrades}`,
  ];
  ctx.stdout.write(lines.join('\n') + '\n');
}

/** Nomad's formatAutopilotState: the summary, the voters, then a table of the servers. */
function formatHealth(h: OperatorHealthReply): string {
  const rows = [
    ['ID', 'Name', 'Address', 'SerfStatus', 'Version', 'Leader', 'Voter', 'Healthy', 'LastContact', 'LastTerm', 'LastIndex', 'StableSince'],
    ...h.Servers.map((s) => [s.ID, s.Name, s.Address, s.SerfStatus, s.Version, String(s.Leader), String(s.Voter), String(s.Healthy), s.LastContact, String(s.LastTerm), String(s.LastIndex), s.StableSince]),
  ];
  return (
    `Healthy: ${h.Healthy}\n` +
    `FailureTolerance: ${h.FailureTolerance}\n` +
    `Leader: ${h.Leader}\n` +
    `Voters:\n${h.Voters.map((v) => `\t${v}\n`).join('')}` +
    `Servers:\n${formatColumns(rows)}\n`
  );
}

/** Registers `operator autopilot get-config|set-config|health`. */
export const operatorAutopilotCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const autopilot = commandGroup(program, 'operator').command('autopilot').description('Read and change the autopilot configuration, and show the servers\' health');
    addApiFlags(autopilot.command('get-config').description('Show the autopilot configuration')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying Autopilot configuration', async () => {
        const { body } = await apiClient(ctx, opts).get<AutopilotConfigurationJson>(CONFIG_PATH);
        if (opts.json) printJson(ctx, body);
        else printConfig(ctx, body);
        return ExitCode.Ok;
      });
    });
    addApiFlags(
      autopilot
        .command('set-config')
        .description('Change the autopilot configuration (only the flags given)')
        .option('--cleanup-dead-servers <bool>', 'remove dead servers when a new one joins')
        .option('--max-trailing-logs <n>', 'log entries a server may trail the leader by and stay healthy')
        .option('--min-quorum <n>', 'servers kept before dead ones are pruned')
        .option('--last-contact-threshold <duration>', 'time a server may go without leader contact and stay healthy')
        .option('--server-stabilization-time <duration>', 'time a server must be healthy before it counts')
        .option('--enable-redundancy-zones <bool>', '(Enterprise) redundancy zones')
        .option('--disable-upgrade-migration <bool>', '(Enterprise) upgrade migration')
        .option('--enable-custom-upgrades <bool>', '(Enterprise) custom upgrade versions'),
    ).action(async (opts: SetFlags) => {
      await runApiCommand(ctx, 'updating Autopilot configuration', async () => {
        const api = apiClient(ctx, opts);
        const { body: c } = await api.get<AutopilotConfigurationJson>(CONFIG_PATH);
        const next: AutopilotConfigurationJson = {
          ...c,
          CleanupDeadServers: boolFlag('cleanup-dead-servers', opts.cleanupDeadServers, c.CleanupDeadServers),
          MaxTrailingLogs: countFlag('max-trailing-logs', opts.maxTrailingLogs, c.MaxTrailingLogs),
          MinQuorum: countFlag('min-quorum', opts.minQuorum, c.MinQuorum),
          LastContactThreshold: durationFlag('last-contact-threshold', opts.lastContactThreshold, c.LastContactThreshold),
          ServerStabilizationTime: durationFlag('server-stabilization-time', opts.serverStabilizationTime, c.ServerStabilizationTime),
          EnableRedundancyZones: boolFlag('enable-redundancy-zones', opts.enableRedundancyZones, c.EnableRedundancyZones),
          DisableUpgradeMigration: boolFlag('disable-upgrade-migration', opts.disableUpgradeMigration, c.DisableUpgradeMigration),
          EnableCustomUpgrades: boolFlag('enable-custom-upgrades', opts.enableCustomUpgrades, c.EnableCustomUpgrades),
        };
        const { body: updated } = await api.put<boolean>(CONFIG_PATH, next, { cas: String(c.ModifyIndex) });
        if (updated !== true) {
          ctx.stdout.write('Configuration could not be atomically updated, please try again\n');
          return ExitCode.Error;
        }
        ctx.stdout.write('Configuration updated!\n');
        return ExitCode.Ok;
      });
    });
    addApiFlags(autopilot.command('health').description('Show the health of the servers')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'querying Autopilot configuration', async () => {
        const { body } = await apiClient(ctx, opts).get<OperatorHealthReply>('/v1/operator/autopilot/health');
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(formatHealth(body));
        return ExitCode.Ok;
      });
    });
  },
};
