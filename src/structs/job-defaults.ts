/**
 * Nomad's defaults for a job, filled in as a Nomad server stores a registered job (the API's
 * Canonicalize plus the server's own defaults). Missing fields get defaults; fields the user set,
 * including zeros, are kept. Restart, reschedule, update and migrate defaults depend on the job type.
 */
import type { DeepPartial, JobDraft, TaskDraft, TaskGroupDraft } from './job-draft.js';
import { NANOS_PER_SECOND, type Nanos } from './duration.js';
import { canonicalizeScalingPolicy, defaultGroupCount } from './scaling-policy.js';
import {
  JobType,
  type Affinity,
  type Constraint,
  type EphemeralDisk,
  type Job,
  type LogConfig,
  type MigrateStrategy,
  type ReschedulePolicy,
  type RestartPolicy,
  type Spread,
  type Task,
  type TaskGroup,
  type UpdateStrategy,
} from './job.js';
import type { NetworkResource, Port, Resources } from './resources.js';
import { canonicalizeService, type Service, type ServiceInput } from './service.js';
import { canonicalizeArtifact, canonicalizeTemplate } from './template.js';
import { canonicalizeIdentity, type WorkloadIdentity } from './workload-identity.js';
import { canonicalizeVolumeMounts, canonicalizeVolumes } from './host-volume.js';

const S = NANOS_PER_SECOND;
const MIN = 60 * S;
const HOUR = 60 * MIN;

/** Default priority of a job (Nomad: 50; a server's `job_default_priority` may raise it). */
export const DEFAULT_JOB_PRIORITY = 50;
/** The lowest job priority (Nomad's JobMinPriority). */
export const JOB_MIN_PRIORITY = 1;
/** The highest priority a server admits unless its `job_max_priority` says more (Nomad's default). */
export const DEFAULT_JOB_MAX_PRIORITY = 100;
/** The highest `job_max_priority` a server may set (Nomad's JobMaxPriority, MaxInt16 - 1). */
export const JOB_PRIORITY_CEILING = 32_766;
/** Default task resources: 100 MHz CPU, 300 MiB memory. */
export const DEFAULT_TASK_CPU = 100;
export const DEFAULT_TASK_MEMORY_MB = 300;
/** Default kill timeout: 5s. */
export const DEFAULT_KILL_TIMEOUT: Nanos = 5 * S;

/** The restart policy a group gets when it states none: service/system 2 in 30m, batch/sysbatch 3 in 24h. */
export function defaultRestartPolicy(type: JobType): RestartPolicy {
  switch (type) {
    case JobType.Service:
    case JobType.System:
      return { Attempts: 2, Interval: 30 * MIN, Delay: 15 * S, Mode: 'fail', RenderTemplates: false };
    case JobType.Batch:
    case JobType.SysBatch:
      return { Attempts: 3, Interval: 24 * HOUR, Delay: 15 * S, Mode: 'fail', RenderTemplates: false };
    default: {
      const never: never = type;
      return defaultRestartPolicy(never);
    }
  }
}

/** The reschedule policy per type: service unlimited exponential, batch once in 24h, system none. */
export function defaultReschedulePolicy(type: JobType): ReschedulePolicy | null {
  switch (type) {
    case JobType.Service:
      return { Attempts: 0, Interval: 0, Delay: 30 * S, DelayFunction: 'exponential', MaxDelay: HOUR, Unlimited: true };
    case JobType.Batch:
      return { Attempts: 1, Interval: 24 * HOUR, Delay: 5 * S, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false };
    case JobType.System:
    case JobType.SysBatch:
      return null;
    default: {
      const never: never = type;
      return defaultReschedulePolicy(never);
    }
  }
}

/** Nomad's default update strategy (service jobs). */
export function defaultUpdateStrategy(): UpdateStrategy {
  return {
    Stagger: 30 * S,
    MaxParallel: 1,
    HealthCheck: 'checks',
    MinHealthyTime: 10 * S,
    HealthyDeadline: 5 * MIN,
    ProgressDeadline: 10 * MIN,
    Canary: 0,
    AutoRevert: false,
    AutoPromote: false,
  };
}

/** Nomad's default migrate strategy (service jobs). */
export function defaultMigrateStrategy(): MigrateStrategy {
  return { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: 10 * S, HealthyDeadline: 5 * MIN };
}

/** Fields of `over` that are set (not undefined/null) win over `base`. */
function merge<T extends object>(base: T, over: DeepPartial<T> | null | undefined): T {
  const out = { ...base } as Record<string, unknown>;
  if (over) for (const [k, v] of Object.entries(over)) if (v !== undefined && v !== null) out[k] = v;
  return out as T;
}

function isEmptyUpdate(u: DeepPartial<UpdateStrategy>): boolean {
  return Object.values(u).every((v) => v === undefined || v === null || v === 0 || v === '' || v === false);
}

function list<T>(v: T[] | null | undefined): T[] | null {
  return v && v.length > 0 ? [...v] : null;
}

function constraints(v: DeepPartial<Constraint>[] | null | undefined): Constraint[] | null {
  return list(v?.map((c) => ({ LTarget: c.LTarget ?? '', RTarget: c.RTarget ?? '', Operand: c.Operand ?? '=' })));
}

function affinities(v: DeepPartial<Affinity>[] | null | undefined): Affinity[] | null {
  return list(v?.map((a) => ({ LTarget: a.LTarget ?? '', RTarget: a.RTarget ?? '', Operand: a.Operand ?? '=', Weight: a.Weight ?? 50 })));
}

function spreads(v: DeepPartial<Spread>[] | null | undefined): Spread[] | null {
  return list(
    v?.map((s) => ({
      Attribute: s.Attribute ?? '',
      Weight: s.Weight ?? 50,
      SpreadTarget: list(s.SpreadTarget?.map((t) => ({ Value: t.Value ?? '', Percent: t.Percent ?? 0 }))),
    })),
  );
}

function port(p: DeepPartial<Port>): Port {
  return { Label: p.Label ?? '', Value: p.Value ?? 0, To: p.To ?? 0, HostNetwork: p.HostNetwork || 'default' };
}

function network(n: DeepPartial<NetworkResource>): NetworkResource {
  const out: NetworkResource = {
    Mode: n.Mode || 'host',
    Device: n.Device ?? '',
    CIDR: n.CIDR ?? '',
    IP: n.IP ?? '',
    MBits: n.MBits ?? 0,
    DNS: n.DNS ? { Servers: [...(n.DNS.Servers ?? [])], Searches: [...(n.DNS.Searches ?? [])], Options: [...(n.DNS.Options ?? [])] } : null,
    ReservedPorts: list(n.ReservedPorts?.map(port)),
    DynamicPorts: list(n.DynamicPorts?.map(port)),
  };
  if (n.Hostname) out.Hostname = n.Hostname;
  if (n.CNI) out.CNI = { Args: n.CNI.Args ? { ...(n.CNI.Args as Record<string, string>) } : null };
  return out;
}

function resources(r: DeepPartial<Resources> | null | undefined): Resources {
  const out: Resources = {
    CPU: r?.CPU ?? DEFAULT_TASK_CPU,
    Cores: r?.Cores ?? 0,
    MemoryMB: r?.MemoryMB ?? DEFAULT_TASK_MEMORY_MB,
    MemoryMaxMB: r?.MemoryMaxMB ?? 0,
    DiskMB: r?.DiskMB ?? 0,
    // Values in Nomad's structs.Resources: a stored job always carries them.
    IOPS: r?.IOPS ?? 0,
    SecretsMB: r?.SecretsMB ?? 0,
    Networks: list(r?.Networks?.map(network)),
    Devices: list(r?.Devices as unknown[] | undefined),
  };
  // Nomad: a task that reserves whole cores gets no MHz share on top.
  if (r?.Cores && r.CPU === undefined) out.CPU = 0;
  return out;
}

function services(v: readonly unknown[] | null | undefined, job: string, group: string, task: string | null): Service[] | null {
  return list(v?.map((s) => canonicalizeService((s ?? {}) as ServiceInput, job, group, task)));
}

function task(t: TaskDraft, groupRestart: RestartPolicy, jobName: string, groupName: string, groupMaxRun?: number | null): Task {
  const lifecycle = t.Lifecycle && t.Lifecycle.Hook ? { Hook: t.Lifecycle.Hook, Sidecar: t.Lifecycle.Sidecar ?? false } : null;
  const logs: LogConfig = merge<LogConfig>({ MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false }, t.LogConfig);
  return {
    Name: t.Name ?? '',
    Driver: t.Driver ?? '',
    User: t.User ?? '',
    Lifecycle: lifecycle,
    Config: { ...(t.Config ?? {}) },
    Constraints: constraints(t.Constraints),
    Affinities: affinities(t.Affinities),
    Env: t.Env ? { ...(t.Env as Record<string, string>) } : null,
    Services: services(t.Services, jobName, groupName, t.Name ?? ''),
    Resources: resources(t.Resources),
    // Nomad: the task's restart block is merged over its group's.
    RestartPolicy: merge(groupRestart, t.RestartPolicy),
    Meta: t.Meta ? { ...(t.Meta as Record<string, string>) } : null,
    KillTimeout: t.KillTimeout ?? DEFAULT_KILL_TIMEOUT,
    LogConfig: logs,
    Artifacts: list(t.Artifacts?.map((a) => canonicalizeArtifact((a ?? {}) as Parameters<typeof canonicalizeArtifact>[0]))),
    Templates: list(t.Templates?.map((x) => canonicalizeTemplate((x ?? {}) as Parameters<typeof canonicalizeTemplate>[0]))),
    DispatchPayload: t.DispatchPayload ? { File: t.DispatchPayload.File ?? '' } : null,
    Leader: t.Leader ?? false,
    ShutdownDelay: t.ShutdownDelay ?? 0,
    KillSignal: t.KillSignal ?? '',
    Kind: t.Kind ?? '',
    // Only when declared: a task without identity blocks keeps the shape it always had.
    ...(t.Identity ? { Identity: canonicalizeIdentity(t.Identity as Partial<WorkloadIdentity>) } : {}),
    ...(t.Identities && t.Identities.length > 0 ? { Identities: t.Identities.map((i) => canonicalizeIdentity(i as Partial<WorkloadIdentity>)) } : {}),
    VolumeMounts: canonicalizeVolumeMounts(t.VolumeMounts),
    ...taskExtras(t, groupMaxRun),
  };
}

/**
 * Fields a stored task carries only when the job states them, so jobs without them keep
 * their exact shape: max_run_duration (the group's unless the task has its own), actions,
 * and the Vault/Consul/CSI blocks kept for registration to refuse.
 */
function taskExtras(t: TaskDraft, groupMaxRun: number | null | undefined): Partial<Task> {
  const out: Partial<Task> = {};
  const maxRun = t.MaxRunDuration ?? groupMaxRun;
  if (maxRun) out.MaxRunDuration = maxRun;
  if (t.Actions && t.Actions.length > 0) {
    out.Actions = t.Actions.map((a) => ({ Name: a?.Name ?? '', Command: a?.Command ?? '', Args: list(a?.Args as string[] | undefined) }));
  }
  if (t.Vault) out.Vault = t.Vault as Record<string, unknown>;
  if (t.Consul) out.Consul = t.Consul as Record<string, unknown>;
  if (t.CSIPluginConfig) out.CSIPluginConfig = t.CSIPluginConfig as Record<string, unknown>;
  if (t.Schedule) out.Schedule = t.Schedule as Record<string, unknown>;
  if (t.Secrets && t.Secrets.length > 0) out.Secrets = t.Secrets as Task['Secrets'];
  if (t.ScalingPolicies && t.ScalingPolicies.length > 0) {
    out.ScalingPolicies = t.ScalingPolicies.map((p) => canonicalizeScalingPolicy(p, 0)).filter((p) => p !== null);
  }
  return out;
}

function group(g: TaskGroupDraft, type: JobType, jobUpdate: DeepPartial<UpdateStrategy> | null | undefined, jobName: string): TaskGroup {
  const restart = merge(defaultRestartPolicy(type), g.RestartPolicy);
  const rescheduleDefault = defaultReschedulePolicy(type);
  const reschedule = rescheduleDefault ? merge(rescheduleDefault, g.ReschedulePolicy) : null;
  // Nomad: a group's update block is merged over the job's; groups of non-service jobs without
  // any update block get none.
  let update: UpdateStrategy | null = null;
  if (g.Update || (jobUpdate && !isEmptyUpdate(jobUpdate))) {
    // Empty strings in a job-level update (as the API shows stored jobs) are "unset" here.
    const jobFields = jobUpdate ? Object.fromEntries(Object.entries(jobUpdate).filter(([, v]) => v !== '')) : null;
    update = merge(merge(defaultUpdateStrategy(), jobFields as DeepPartial<UpdateStrategy> | null), g.Update);
  }
  const migrate = type === JobType.Service ? merge(defaultMigrateStrategy(), g.Migrate) : null;
  const disk: EphemeralDisk = merge<EphemeralDisk>({ Sticky: false, Migrate: false, SizeMB: 300 }, g.EphemeralDisk);
  const count = defaultGroupCount(g.Count, g.Scaling);
  return {
    Name: g.Name ?? '',
    Count: count,
    Constraints: constraints(g.Constraints),
    Affinities: affinities(g.Affinities),
    Spreads: spreads(g.Spreads),
    Tasks: (g.Tasks ?? []).map((t) => task(t, restart, jobName, g.Name ?? '', g.MaxRunDuration)),
    RestartPolicy: restart,
    ReschedulePolicy: reschedule,
    EphemeralDisk: disk,
    Update: update,
    Migrate: migrate,
    Networks: list(g.Networks?.map(network)),
    Meta: g.Meta ? { ...(g.Meta as Record<string, string>) } : null,
    Services: services(g.Services, jobName, g.Name ?? '', null),
    ShutdownDelay: g.ShutdownDelay ?? null,
    StopAfterClientDisconnect: g.StopAfterClientDisconnect ?? null,
    MaxClientDisconnect: g.MaxClientDisconnect ?? null,
    Volumes: canonicalizeVolumes(g.Volumes),
    Scaling: canonicalizeScalingPolicy(g.Scaling, count),
    ...(g.MaxRunDuration ? { MaxRunDuration: g.MaxRunDuration } : {}),
    ...(g.Consul ? { Consul: g.Consul as Record<string, unknown> } : {}),
  };
}

const KNOWN_TYPES: readonly string[] = Object.values(JobType);

/**
 * Returns a full Job from a draft (HCL or API JSON), with Nomad's defaults where fields are
 * missing. Pure: the draft is not modified. An unknown Type is kept (validation reports it);
 * type-dependent defaults then follow "service".
 */
export function canonicalizeJob(draft: JobDraft): Job {
  const type = (draft.Type || JobType.Service) as JobType;
  const typeForDefaults: JobType = KNOWN_TYPES.includes(type) ? type : JobType.Service;
  const id = draft.ID ?? '';
  // Nomad: service jobs without an update block get the default strategy; the stored job keeps
  // only its Stagger and MaxParallel (the rest lives on the groups).
  const jobUpdateDraft = draft.Update ?? (typeForDefaults === JobType.Service ? defaultUpdateStrategy() : null);
  const jobUpdate: UpdateStrategy = {
    Stagger: jobUpdateDraft?.Stagger ?? 0,
    MaxParallel: jobUpdateDraft?.MaxParallel ?? 0,
    HealthCheck: '',
    MinHealthyTime: 0,
    HealthyDeadline: 0,
    ProgressDeadline: 0,
    Canary: 0,
    AutoRevert: false,
    AutoPromote: false,
  };
  const periodic = draft.Periodic
    ? {
        Enabled: draft.Periodic.Enabled ?? true,
        Spec: draft.Periodic.Spec ?? draft.Periodic.Specs?.[0] ?? '',
        ...(draft.Periodic.Specs ? { Specs: [...draft.Periodic.Specs] } : {}),
        SpecType: draft.Periodic.SpecType || 'cron',
        ProhibitOverlap: draft.Periodic.ProhibitOverlap ?? false,
        TimeZone: draft.Periodic.TimeZone || 'UTC',
      }
    : null;
  const parameterized = draft.ParameterizedJob
    ? {
        Payload: draft.ParameterizedJob.Payload || 'optional',
        MetaRequired: list(draft.ParameterizedJob.MetaRequired),
        MetaOptional: list(draft.ParameterizedJob.MetaOptional),
      }
    : null;
  const job: Job = {
    Region: draft.Region || 'global',
    Namespace: draft.Namespace || 'default',
    ID: id,
    Name: draft.Name || id,
    Type: type,
    Priority: draft.Priority ?? DEFAULT_JOB_PRIORITY,
    AllAtOnce: draft.AllAtOnce ?? false,
    Datacenters: draft.Datacenters && draft.Datacenters.length > 0 ? [...draft.Datacenters] : ['*'],
    NodePool: draft.NodePool || 'default',
    Constraints: constraints(draft.Constraints),
    Affinities: affinities(draft.Affinities),
    Spreads: spreads(draft.Spreads),
    TaskGroups: (draft.TaskGroups ?? []).map((g) => group(g, typeForDefaults, jobUpdateDraft, draft.Name || id)),
    Update: jobUpdate,
    Periodic: periodic,
    ParameterizedJob: parameterized,
    Dispatched: draft.Dispatched ?? false,
    Payload: draft.Payload ?? null,
    Meta: draft.Meta ? { ...(draft.Meta as Record<string, string>) } : null,
    // Kept only when set, so that registration can refuse them (Caravan has no Consul or Vault).
    ...(draft.ConsulToken ? { ConsulToken: draft.ConsulToken } : {}),
    ...(draft.VaultToken ? { VaultToken: draft.VaultToken } : {}),
    ...(draft.Multiregion ? { Multiregion: draft.Multiregion as Job['Multiregion'] } : {}),
    // Nomad's default count for a selection is 1.
    ...(draft.GroupSelections && draft.GroupSelections.length > 0
      ? { GroupSelections: draft.GroupSelections.map((s) => ({ Name: s?.Name ?? '', Count: s?.Count ?? 1, Groups: list(s?.Groups as string[] | undefined) ?? [] })) }
      : {}),
    ConsulNamespace: draft.ConsulNamespace ?? '',
    VaultNamespace: draft.VaultNamespace ?? '',
    // Nomad keeps here the accessor of the token that submitted the job (for Vault and
    // Consul); Caravan has neither, and never takes the field from a submission.
    NomadTokenID: '',
    Stop: draft.Stop ?? false,
    ParentID: draft.ParentID ?? '',
    Status: draft.Status ?? 'pending',
    StatusDescription: draft.StatusDescription ?? '',
    Stable: draft.Stable ?? false,
    Version: draft.Version ?? 0,
    SubmitTime: draft.SubmitTime ?? 0,
    CreateIndex: draft.CreateIndex ?? 0,
    ModifyIndex: draft.ModifyIndex ?? 0,
    JobModifyIndex: draft.JobModifyIndex ?? 0,
  };
  if (draft.DispatchIdempotencyToken) job.DispatchIdempotencyToken = draft.DispatchIdempotencyToken;
  if (draft.UI) {
    job.UI = {
      Description: draft.UI.Description ?? '',
      Links: list(draft.UI.Links?.map((l) => ({ Label: l?.Label ?? '', URL: l?.URL ?? '' }))),
    };
  }
  return job;
}
