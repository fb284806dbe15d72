/**
 * Nomad's AutopilotConfiguration (`/v1/operator/autopilot/configuration`): the thresholds by
 * which the servers' health is judged (LastContactThreshold, MaxTrailingLogs,
 * ServerStabilizationTime) and the dead-server cleanup settings. Stored in the replicated state
 * so every server answers the same; Caravan judges `operator autopilot health` by it and keeps
 * the rest (cleanup, redundancy zones, upgrade migration) for Nomad's clients. Durations are
 * kept in nanoseconds and written as Go duration strings on the wire, as Nomad's api package
 * (un)marshals them.
 */
import { DurationParseError, NANOS_PER_MS, NANOS_PER_SECOND, formatDuration, parseDuration, type Nanos } from './duration.js';

/** The configuration as stored. */
export interface AutopilotConfig {
  CleanupDeadServers: boolean;
  LastContactThreshold: Nanos;
  MaxTrailingLogs: number;
  MinQuorum: number;
  ServerStabilizationTime: Nanos;
  EnableRedundancyZones: boolean;
  DisableUpgradeMigration: boolean;
  EnableCustomUpgrades: boolean;
  CreateIndex: number;
  ModifyIndex: number;
}

/** The settable part (what a PUT carries). */
export type AutopilotConfigFields = Omit<AutopilotConfig, 'CreateIndex' | 'ModifyIndex'>;

/** Nomad's api.AutopilotConfiguration JSON: durations as Go duration strings. */
export interface AutopilotConfigurationJson extends Omit<AutopilotConfig, 'LastContactThreshold' | 'ServerStabilizationTime'> {
  LastContactThreshold: string;
  ServerStabilizationTime: string;
}

/** Nomad's server defaults (agent `autopilot` block): cleanup on, 200ms, 250 logs, 10s. */
export function defaultAutopilotConfig(): AutopilotConfig {
  return {
    CleanupDeadServers: true,
    LastContactThreshold: 200 * NANOS_PER_MS,
    MaxTrailingLogs: 250,
    MinQuorum: 0,
    ServerStabilizationTime: 10 * NANOS_PER_SECOND,
    EnableRedundancyZones: false,
    DisableUpgradeMigration: false,
    EnableCustomUpgrades: false,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** The wire form of a stored configuration. */
export function autopilotConfigJson(c: AutopilotConfig): AutopilotConfigurationJson {
  return {
    CleanupDeadServers: c.CleanupDeadServers,
    LastContactThreshold: formatDuration(c.LastContactThreshold),
    MaxTrailingLogs: c.MaxTrailingLogs,
    MinQuorum: c.MinQuorum,
    ServerStabilizationTime: formatDuration(c.ServerStabilizationTime),
    EnableRedundancyZones: c.EnableRedundancyZones,
    DisableUpgradeMigration: c.DisableUpgradeMigration,
    EnableCustomUpgrades: c.EnableCustomUpgrades,
    CreateIndex: c.CreateIndex,
    ModifyIndex: c.ModifyIndex,
  };
}

/** A field of a PUT body that does not fit; `field` names it. */
export class AutopilotConfigProblem {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {}
}

function bool(body: Record<string, unknown>, name: string): boolean {
  const v = body[name];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new AutopilotConfigProblem(name, 'must be a boolean');
  return v;
}

function count(body: Record<string, unknown>, name: string): number {
  const v = body[name];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new AutopilotConfigProblem(name, 'must be a non-negative whole number');
  return v;
}

/** A duration as Nomad's api (un)marshals it: a Go duration string; integer nanoseconds also taken. */
function duration(body: Record<string, unknown>, name: string): Nanos {
  const v = body[name];
  if (v === undefined || v === null || v === '') return 0;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v === 'string') {
    try {
      const ns = parseDuration(v);
      if (ns >= 0) return ns;
    } catch (err) {
      if (!(err instanceof DurationParseError)) throw err;
    }
  }
  throw new AutopilotConfigProblem(name, `must be a duration such as "200ms" or "10s", got ${JSON.stringify(v)}`);
}

/**
 * The configuration a PUT body asks for. As in Nomad, the body replaces the whole
 * configuration: absent fields take their zero values (`nomad operator autopilot set-config`
 * reads the current one first). Returns a problem instead of throwing, so callers choose the error.
 */
export function parseAutopilotConfig(body: Record<string, unknown>): AutopilotConfigFields | AutopilotConfigProblem {
  try {
    return {
      CleanupDeadServers: bool(body, 'CleanupDeadServers'),
      LastContactThreshold: duration(body, 'LastContactThreshold'),
      MaxTrailingLogs: count(body, 'MaxTrailingLogs'),
      MinQuorum: count(body, 'MinQuorum'),
      ServerStabilizationTime: duration(body, 'ServerStabilizationTime'),
      EnableRedundancyZones: bool(body, 'EnableRedundancyZones'),
      DisableUpgradeMigration: bool(body, 'DisableUpgradeMigration'),
      EnableCustomUpgrades: bool(body, 'EnableCustomUpgrades'),
    };
  } catch (err) {
    if (err instanceof AutopilotConfigProblem) return err;
    throw err;
  }
}
