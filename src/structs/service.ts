/**
 * Service and health check registrations of a task or group, in Nomad's API shape (api/services.go).
 * Caravan stores them (no Consul); durations are integer nanoseconds.
 */
import type { Nanos } from './duration.js';

/** Who registers a service: Consul (Nomad's default) or Nomad's own catalog. */
export const ServiceProvider = { Consul: 'consul', Nomad: 'nomad' } as const;
export type ServiceProvider = (typeof ServiceProvider)[keyof typeof ServiceProvider];

/** How failing checks restart the task. */
export interface CheckRestart {
  Limit: number;
  Grace: Nanos | null;
  IgnoreWarnings: boolean;
}

/** One health check of a service. */
export interface ServiceCheck {
  Name: string;
  Type: string;
  Command: string;
  Args: string[] | null;
  Path: string;
  Protocol: string;
  PortLabel: string;
  Expose: boolean;
  AddressMode: string;
  Interval: Nanos;
  Timeout: Nanos;
  InitialStatus: string;
  TLSServerName: string;
  TLSSkipVerify: boolean;
  Header: Record<string, string[]> | null;
  Method: string;
  Body: string;
  GRPCService: string;
  GRPCUseTLS: boolean;
  SuccessBeforePassing: number;
  FailuresBeforeCritical: number;
  FailuresBeforeWarning: number;
  OnUpdate: string;
  TaskName: string;
  CheckRestart: CheckRestart | null;
}

/** A service registration. */
export interface Service {
  Name: string;
  Tags: string[] | null;
  CanaryTags: string[] | null;
  EnableTagOverride: boolean;
  PortLabel: string;
  AddressMode: string;
  Address: string;
  Checks: ServiceCheck[] | null;
  CheckRestart: CheckRestart | null;
  Meta: Record<string, string> | null;
  CanaryMeta: Record<string, string> | null;
  TaggedAddresses: Record<string, string> | null;
  TaskName: string;
  OnUpdate: string;
  Provider: string;
  /** Nomad's Consul Connect block, kept as written: registration refuses it. */
  Connect?: Record<string, unknown> | null;
}

/** Partial input accepted by canonicalizeService (HCL decode or API JSON). */
export type ServiceInput = { [K in Exclude<keyof Service, 'Checks'>]?: Service[K] | undefined } & {
  Checks?: ({ [K in keyof ServiceCheck]?: ServiceCheck[K] | undefined } | null | undefined)[] | null;
};

function strings(v: unknown): string[] | null {
  return Array.isArray(v) && v.length > 0 ? v.map(String) : null;
}

function stringMap(v: unknown): Record<string, string> | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const entries = Object.entries(v as Record<string, unknown>);
  return entries.length > 0 ? Object.fromEntries(entries.map(([k, x]) => [k, String(x)])) : null;
}

function checkRestart(v: Partial<CheckRestart> | null | undefined): CheckRestart | null {
  if (!v) return null;
  // Nomad: an unset grace becomes 1s.
  return { Limit: v.Limit ?? 0, Grace: v.Grace ?? 1_000_000_000, IgnoreWarnings: v.IgnoreWarnings ?? false };
}

/**
 * Fills Nomad's defaults for a service (api Service.Canonicalize plus the server's): the name
 * `<job>-<group>[-<task>]`, address mode "auto", on_update "require_healthy", provider "consul";
 * checks inherit on_update and the service's check_restart, and get a name when unnamed.
 */
export function canonicalizeService(s: ServiceInput, job: string, group: string, task: string | null): Service {
  const name = s.Name || (task !== null ? `${job}-${group}-${task}` : `${job}-${group}`);
  const onUpdate = s.OnUpdate || 'require_healthy';
  const serviceRestart = s.CheckRestart ?? null;
  const checks = (s.Checks ?? []).filter((c) => c !== null && c !== undefined).map((c): ServiceCheck => ({
    Name: c.Name || `service: ${JSON.stringify(name)} check`,
    Type: c.Type ?? '',
    Command: c.Command ?? '',
    Args: strings(c.Args),
    Path: c.Path ?? '',
    Protocol: c.Protocol ?? '',
    PortLabel: c.PortLabel ?? '',
    Expose: c.Expose ?? false,
    AddressMode: c.AddressMode ?? '',
    Interval: c.Interval ?? 0,
    Timeout: c.Timeout ?? 0,
    InitialStatus: c.InitialStatus ?? '',
    TLSServerName: c.TLSServerName ?? '',
    TLSSkipVerify: c.TLSSkipVerify ?? false,
    Header: c.Header && Object.keys(c.Header).length > 0 ? c.Header : null,
    Method: c.Method ?? '',
    Body: c.Body ?? '',
    GRPCService: c.GRPCService ?? '',
    GRPCUseTLS: c.GRPCUseTLS ?? false,
    SuccessBeforePassing: Math.max(0, c.SuccessBeforePassing ?? 0),
    FailuresBeforeCritical: Math.max(0, c.FailuresBeforeCritical ?? 0),
    FailuresBeforeWarning: Math.max(0, c.FailuresBeforeWarning ?? 0),
    OnUpdate: c.OnUpdate || onUpdate,
    TaskName: c.TaskName || s.TaskName || (task ?? ''),
    CheckRestart: checkRestart(c.CheckRestart || serviceRestart ? { ...serviceRestart, ...c.CheckRestart } : null),
  }));
  return {
    Name: name,
    Tags: strings(s.Tags),
    CanaryTags: strings(s.CanaryTags),
    EnableTagOverride: s.EnableTagOverride ?? false,
    PortLabel: s.PortLabel ?? '',
    AddressMode: s.AddressMode || 'auto',
    Address: s.Address ?? '',
    Checks: checks.length > 0 ? checks : null,
    CheckRestart: checkRestart(serviceRestart),
    Meta: stringMap(s.Meta),
    CanaryMeta: stringMap(s.CanaryMeta),
    TaggedAddresses: stringMap(s.TaggedAddresses),
    TaskName: s.TaskName || (task ?? ''),
    OnUpdate: onUpdate,
    Provider: s.Provider || ServiceProvider.Consul,
    ...(s.Connect ? { Connect: s.Connect } : {}),
  };
}
