/**
 * Validation of a canonical Job (after canonicalizeJob): every problem is reported with its
 * path, e.g. `job "web": group "api": task "srv": driver is required`. The HTTP API answers 400
 * with these messages; the CLI prints them and exits 1.
 */
import { CaravanError } from './caravan-error.js';
import { formatDuration } from './duration.js';
import {
  DelayFunction,
  JobType,
  LifecycleHook,
  RestartMode,
  type Affinity,
  type Constraint,
  type Job,
  type ReschedulePolicy,
  type RestartPolicy,
  type Task,
  type TaskGroup,
  type UpdateStrategy,
} from './job.js';
import { DEFAULT_JOB_MAX_PRIORITY, JOB_MIN_PRIORITY } from './job-defaults.js';
import { MEMORY_MAX_UNLIMITED, type NetworkResource } from './resources.js';
import { posix } from 'node:path';
import { scalingPolicyProblems } from './scaling-policy.js';
import { identityProblems } from './workload-identity.js';
import { PROPAGATION_MODES, VolumeType } from './host-volume.js';
import { HOST_VOLUME_ACCESS_MODES, HOST_VOLUME_ATTACHMENT_MODES } from './dynamic-host-volume.js';
import { jobFeatureProblems } from './job-feature-checks.js';
import { isArtifactMode, isTemplateChangeMode, TemplateChangeMode, type TaskArtifact, type Template } from './template.js';
import { nomadServiceProblems } from './nomad-service-validate.js';
import { serviceCheckProblems } from './service-check-validate.js';

/** One validation problem: where (path) and what (message). */
export interface ValidationProblem {
  /** e.g. `job "web": group "api": task "srv"`. */
  path: string;
  /** e.g. `driver is required`. */
  message: string;
}

/** Renders a problem as `path: message`. */
export function formatValidationProblem(p: ValidationProblem): string {
  return p.path ? `${p.path}: ${p.message}` : p.message;
}

/** Thrown when a job is invalid; `problems` lists every problem found, in document order. */
export class JobValidationError extends CaravanError<'JOB_INVALID'> {
  constructor(readonly problems: ValidationProblem[]) {
    super('JOB_INVALID', {
      reason: problems.length === 1
        ? formatValidationProblem(problems[0]!)
        : `${problems.length} problems:\n${problems.map((p) => `  * ${formatValidationProblem(p)}`).join('\n')}`,
    });
    this.name = 'JobValidationError';
  }
}

/** Constraint operands Nomad knows. */
export const CONSTRAINT_OPERANDS: readonly string[] = [
  '=', '==', 'is', '!=', 'not', '<', '<=', '>', '>=',
  'distinct_hosts', 'distinct_property', 'regexp', 'version', 'semver',
  'set_contains', 'set_contains_all', 'set_contains_any', 'is_set', 'is_not_set',
];

const PAYLOAD_MODES = ['optional', 'required', 'forbidden'] as const;
const MIN_CPU_MHZ = 1;
const MIN_MEMORY_MB = 10;
const MAX_PORT = 65535;

class Problems {
  readonly list: ValidationProblem[] = [];
  add(path: string, message: string): void {
    this.list.push({ path, message });
  }
}

function checkId(p: Problems, path: string, what: string, value: string): void {
  if (value === '') p.add(path, `${what} is required`);
  else if (/\s/.test(value)) p.add(path, `${what} ${JSON.stringify(value)} contains a space`);
  else if (value.includes('\0')) p.add(path, `${what} contains a null character`);
}

function checkDuration(p: Problems, path: string, name: string, v: number, allowZero = true): void {
  if (!Number.isInteger(v)) p.add(path, `${name} must be a whole number of nanoseconds, got ${v}`);
  else if (v < 0 || (!allowZero && v === 0)) p.add(path, `${name} must be ${allowZero ? 'zero or positive' : 'positive'}, got ${formatDuration(v)}`);
}

function checkConstraints(p: Problems, path: string, list: (Constraint | Affinity)[] | null, kind: string): void {
  (list ?? []).forEach((c, i) => {
    const at = `${path}: ${kind} ${i + 1}`;
    if (!CONSTRAINT_OPERANDS.includes(c.Operand)) {
      p.add(at, `unknown operator ${JSON.stringify(c.Operand)} (expected one of ${CONSTRAINT_OPERANDS.join(', ')})`);
      return;
    }
    const needsL = !['distinct_hosts'].includes(c.Operand);
    const needsR = !['distinct_hosts', 'distinct_property', 'is_set', 'is_not_set'].includes(c.Operand);
    if (needsL && c.LTarget === '') p.add(at, `attribute is required for operator "${c.Operand}"`);
    if (needsR && c.RTarget === '') p.add(at, `value is required for operator "${c.Operand}"`);
    if (c.Operand === 'regexp' && c.RTarget !== '') {
      try {
        new RegExp(c.RTarget);
      } catch {
        p.add(at, `invalid regular expression ${JSON.stringify(c.RTarget)}`);
      }
    }
    if ('Weight' in c && (c.Weight < -100 || c.Weight > 100 || c.Weight === 0)) {
      p.add(at, `weight must be within [-100, 100] and not 0, got ${c.Weight}`);
    }
  });
}

function checkRestart(p: Problems, path: string, r: RestartPolicy): void {
  const at = `${path}: restart`;
  if (r.Mode !== RestartMode.Fail && r.Mode !== RestartMode.Delay) {
    p.add(at, `mode must be "fail" or "delay", got ${JSON.stringify(r.Mode)}`);
  }
  if (!Number.isInteger(r.Attempts) || r.Attempts < 0) p.add(at, `attempts must be a non-negative whole number, got ${r.Attempts}`);
  checkDuration(p, at, 'interval', r.Interval);
  checkDuration(p, at, 'delay', r.Delay);
  if (r.Attempts > 0 && r.Interval > 0 && r.Delay * r.Attempts > r.Interval) {
    p.add(at, `attempts × delay (${r.Attempts} × ${formatDuration(r.Delay)}) must fit in the interval (${formatDuration(r.Interval)})`);
  }
}

function checkReschedule(p: Problems, path: string, r: ReschedulePolicy): void {
  const at = `${path}: reschedule`;
  const fns: readonly string[] = Object.values(DelayFunction);
  if (!fns.includes(r.DelayFunction)) {
    p.add(at, `delay_function must be one of ${fns.join(', ')}, got ${JSON.stringify(r.DelayFunction)}`);
  }
  if (!Number.isInteger(r.Attempts) || r.Attempts < 0) p.add(at, `attempts must be a non-negative whole number, got ${r.Attempts}`);
  checkDuration(p, at, 'interval', r.Interval);
  checkDuration(p, at, 'delay', r.Delay);
  checkDuration(p, at, 'max_delay', r.MaxDelay);
  if (r.DelayFunction !== DelayFunction.Constant && r.MaxDelay > 0 && r.MaxDelay < r.Delay) {
    p.add(at, `max_delay (${formatDuration(r.MaxDelay)}) must not be less than delay (${formatDuration(r.Delay)})`);
  }
}

function checkUpdate(p: Problems, path: string, u: UpdateStrategy): void {
  const at = `${path}: update`;
  if (u.MaxParallel < 0) p.add(at, `max_parallel must not be negative, got ${u.MaxParallel}`);
  if (u.Canary < 0) p.add(at, `canary must not be negative, got ${u.Canary}`);
  if (!['checks', 'task_states', 'manual'].includes(u.HealthCheck)) {
    p.add(at, `health_check must be "checks", "task_states" or "manual", got ${JSON.stringify(u.HealthCheck)}`);
  }
  checkDuration(p, at, 'min_healthy_time', u.MinHealthyTime);
  checkDuration(p, at, 'healthy_deadline', u.HealthyDeadline);
  checkDuration(p, at, 'progress_deadline', u.ProgressDeadline);
  checkDuration(p, at, 'stagger', u.Stagger);
  if (u.HealthyDeadline > 0 && u.MinHealthyTime >= u.HealthyDeadline) {
    p.add(at, 'min_healthy_time must be less than healthy_deadline');
  }
  if (u.ProgressDeadline !== 0 && u.HealthyDeadline > u.ProgressDeadline) {
    p.add(at, 'healthy_deadline must not be greater than progress_deadline');
  }
}

function checkNetworks(p: Problems, path: string, nets: NetworkResource[] | null, seen: Map<string, string>): void {
  for (const n of nets ?? []) {
    for (const port of [...(n.ReservedPorts ?? []), ...(n.DynamicPorts ?? [])]) {
      const at = `${path}: network: port "${port.Label}"`;
      if (port.Label === '') p.add(`${path}: network`, 'port label is required');
      else if (seen.has(port.Label)) p.add(at, `port label "${port.Label}" is already used in ${seen.get(port.Label)}`);
      else seen.set(port.Label, path);
      if (port.To < -1 || port.To > MAX_PORT || !Number.isInteger(port.To)) p.add(at, `to must be within 0..${MAX_PORT}, got ${port.To}`);
    }
    for (const port of n.ReservedPorts ?? []) {
      if (!Number.isInteger(port.Value) || port.Value < 1 || port.Value > MAX_PORT) {
        p.add(`${path}: network: port "${port.Label}"`, `static port must be within 1..${MAX_PORT}, got ${port.Value}`);
      }
    }
  }
}

const NETWORK_MODE = /^(host|bridge|none|cni\/[A-Za-z0-9._-]+)$/;
const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * The group network's mode, hostname and dns block (group networking): a mode the client can
 * provide, a hostname that is a DNS name (unless interpolated at the client), dns entries
 * without whitespace (each becomes a resolv.conf line).
 */
function checkGroupNetworkSettings(p: Problems, path: string, nets: NetworkResource[] | null): void {
  const n = nets?.[0];
  if (!n) return;
  const at = `${path}: network`;
  if (n.Mode && !NETWORK_MODE.test(n.Mode)) p.add(at, `mode ${JSON.stringify(n.Mode)} is not one of "host", "bridge", "none" or "cni/<name>"`);
  if (n.Hostname && !n.Hostname.includes('${') && !DNS_NAME.test(n.Hostname)) p.add(at, `hostname ${JSON.stringify(n.Hostname)} is not a valid DNS name`);
  for (const [key, list] of [['servers', n.DNS?.Servers], ['searches', n.DNS?.Searches], ['options', n.DNS?.Options]] as const) {
    for (const v of list ?? []) if (v === '' || /\s/.test(v)) p.add(`${at}: dns`, `${key} entry ${JSON.stringify(v)} must be non-empty without whitespace`);
  }
}

/** A task's templates as the server sees them (JSON jobs bypass the HCL decoder's checks). */
function checkTemplates(p: Problems, path: string, templates: Template[] | null): void {
  (templates ?? []).forEach((t, i) => {
    const tp = `${path}: template[${i}]`;
    if (t.DestPath === '') p.add(tp, 'must specify a destination');
    if (t.SourcePath === '' && t.EmbeddedTmpl === '') p.add(tp, 'must specify a source or embedded data');
    if (!isTemplateChangeMode(t.ChangeMode)) p.add(tp, `invalid change mode ${JSON.stringify(t.ChangeMode)}: want noop, restart, signal or script`);
    if (t.ChangeMode === TemplateChangeMode.Signal) {
      if (t.ChangeSignal === '') p.add(tp, 'change mode signal needs a change signal');
      if (t.Envvars) p.add(tp, 'cannot use signals with env var templates');
    }
    if (t.ChangeMode === TemplateChangeMode.Script) {
      if (!t.ChangeScript) p.add(tp, 'change mode script needs a change script');
      else if (t.ChangeScript.Command === '') p.add(tp, 'change script needs a command');
      else if (t.ChangeScript.Timeout < 0) p.add(tp, 'change script timeout must not be negative');
    }
    if (t.Splay < 0) p.add(tp, 'splay must not be negative');
    if (!/^[0-7]{1,4}$/.test(t.Perms)) p.add(tp, `perms must be an octal mode such as "0644", got ${JSON.stringify(t.Perms)}`);
    if (t.Wait && t.Wait.Min !== null && t.Wait.Max !== null && t.Wait.Min > t.Wait.Max) p.add(tp, 'wait min must not be greater than max');
    if (t.LeftDelim === '' || t.RightDelim === '') p.add(tp, 'delimiters must not be empty');
  });
}

/** Bytes of each checksum type go-getter verifies. */
const CHECKSUM_BYTES: Record<string, number> = { md5: 16, sha1: 20, sha256: 32, sha512: 64 };

/**
 * A task's artifacts as Nomad's TaskArtifact.Validate checks them at registration: a source, a
 * destination that stays in the allocation directory, a known mode, a well-formed checksum.
 * Which sources a client fetches (http, https, paths inside the allocation) is the client's
 * to decide, as Nomad's getters are.
 */
function checkArtifacts(p: Problems, path: string, artifacts: TaskArtifact[] | null): void {
  (artifacts ?? []).forEach((a, i) => {
    const ap = `${path}: artifact[${i}]`;
    if (a.GetterSource === '') p.add(ap, 'source must be specified');
    // Relative to <alloc>/<task>; Nomad's PathEscapesAllocDir("task", dest).
    const inAlloc = posix.normalize(posix.join('task', a.RelativeDest));
    if (inAlloc === '..' || inAlloc.startsWith('../')) {
      p.add(ap, `destination ${JSON.stringify(a.RelativeDest)} escapes the allocation directory`);
    }
    if (!isArtifactMode(a.GetterMode)) p.add(ap, `mode must be one of any, file, dir, got ${JSON.stringify(a.GetterMode)}`);
    const check = a.GetterOptions?.['checksum'];
    if (check !== undefined) {
      const parts = check.trim().split(':');
      const bytes = parts.length === 2 ? CHECKSUM_BYTES[parts[0]!] : undefined;
      if (parts.length !== 2) p.add(ap, `checksum must be given as "type:value"; got ${JSON.stringify(check)}`);
      else if (bytes === undefined) p.add(ap, `checksum type ${JSON.stringify(parts[0])} is not one of md5, sha1, sha256, sha512`);
      else if (!/^([0-9a-fA-F]{2})*$/.test(parts[1]!) || parts[1]!.length !== bytes * 2) p.add(ap, `${parts[0]} checksum must be ${bytes * 2} hex digits; got ${JSON.stringify(parts[1])}`);
    }
  });
}

function checkTask(p: Problems, path: string, t: Task, groupRestart: RestartPolicy | null): void {
  if (t.Driver === '') p.add(path, 'driver is required');
  if (t.Lifecycle) {
    const hooks: readonly string[] = Object.values(LifecycleHook);
    if (!hooks.includes(t.Lifecycle.Hook)) {
      p.add(`${path}: lifecycle`, `hook must be one of ${hooks.join(', ')}, got ${JSON.stringify(t.Lifecycle.Hook)}`);
    } else if (t.Lifecycle.Hook === LifecycleHook.Poststop && t.Lifecycle.Sidecar) {
      p.add(`${path}: lifecycle`, 'a poststop task cannot be a sidecar');
    }
  }
  const r = t.Resources;
  const rp = `${path}: resources`;
  if (r.Cores > 0 && r.CPU > 0) p.add(rp, 'only one of cpu and cores may be set');
  if (r.Cores === 0 && r.CPU < MIN_CPU_MHZ) p.add(rp, `cpu must be at least ${MIN_CPU_MHZ} MHz, got ${r.CPU}`);
  if (r.Cores < 0 || !Number.isInteger(r.Cores)) p.add(rp, `cores must be a non-negative whole number, got ${r.Cores}`);
  if (r.MemoryMB < MIN_MEMORY_MB) p.add(rp, `memory must be at least ${MIN_MEMORY_MB} MB, got ${r.MemoryMB}`);
  if (r.MemoryMaxMB < 0 && r.MemoryMaxMB !== MEMORY_MAX_UNLIMITED) {
    p.add(rp, `memory_max must be -1 (no hard limit) or at least memory, got ${r.MemoryMaxMB}`);
  } else if (r.MemoryMaxMB > 0 && r.MemoryMaxMB < r.MemoryMB) {
    p.add(rp, `memory_max (${r.MemoryMaxMB} MB) must not be less than memory (${r.MemoryMB} MB)`);
  }
  if (r.DiskMB < 0) p.add(rp, `disk must not be negative, got ${r.DiskMB}`);
  // A task restart policy inherited unchanged from its group was already checked there.
  if (t.RestartPolicy && JSON.stringify(t.RestartPolicy) !== JSON.stringify(groupRestart)) checkRestart(p, path, t.RestartPolicy);
  checkDuration(p, path, 'kill_timeout', t.KillTimeout);
  checkDuration(p, path, 'shutdown_delay', t.ShutdownDelay);
  if (t.LogConfig.MaxFiles < 1) p.add(`${path}: logs`, `max_files must be at least 1, got ${t.LogConfig.MaxFiles}`);
  if (t.LogConfig.MaxFileSizeMB < 1) p.add(`${path}: logs`, `max_file_size must be at least 1, got ${t.LogConfig.MaxFileSizeMB}`);
  checkConstraints(p, path, t.Constraints, 'constraint');
  checkConstraints(p, path, t.Affinities, 'affinity');
  checkTemplates(p, path, t.Templates);
  checkArtifacts(p, path, t.Artifacts);
  for (const [at, message] of identityProblems(path, t.Identity, t.Identities)) p.add(at, message);
  for (const [at, what] of nomadServiceProblems(t.Services)) p.add(`${path}: ${at}`, what);
  for (const [at, what] of serviceCheckProblems(t.Services)) p.add(`${path}: ${at}`, what);
  if (t.DispatchPayload && t.DispatchPayload.File.includes('..')) {
    p.add(`${path}: dispatch_payload`, 'file must stay inside the task directory (no "..")');
  }
}

/**
 * A group's volumes and its tasks' volume mounts (Nomad's VolumeRequest.Validate and the mount
 * checks of TaskGroup.Validate). Only host volumes run on Caravan; a CSI volume is parsed and
 * left for registration to refuse by name.
 */
function checkVolumes(p: Problems, path: string, g: TaskGroup, jobType: string): void {
  const volumes = g.Volumes ?? {};
  for (const [name, v] of Object.entries(volumes)) {
    const vp = `${path}: volume "${name}"`;
    for (const key of ['Type', 'Source', 'AccessMode', 'AttachmentMode'] as const) {
      if (typeof v[key] !== 'string') p.add(vp, `${key} must be a string, got ${JSON.stringify(v[key])}`);
    }
    for (const key of ['ReadOnly', 'Sticky', 'PerAlloc'] as const) {
      if (typeof v[key] !== 'boolean') p.add(vp, `${key} must be a boolean, got ${JSON.stringify(v[key])}`);
    }
    if (v.Type !== VolumeType.Host && v.Type !== VolumeType.Csi) {
      p.add(vp, `volume has unrecognized type ${JSON.stringify(v.Type)} (expected "host" or "csi")`);
      continue;
    }
    if (v.Source === '') p.add(vp, `Volume ${name} has an empty source`);
    if (v.Type === VolumeType.Host) {
      if (v.MountOptions !== null) p.add(vp, 'host volumes cannot have mount options');
      // Nomad 1.10: a request may name a dynamic host volume's capability (the scheduler matches it).
      if (typeof v.AccessMode === 'string' && v.AccessMode !== '' && !(HOST_VOLUME_ACCESS_MODES as readonly string[]).includes(v.AccessMode)) {
        p.add(vp, `access_mode ${JSON.stringify(v.AccessMode)} is not a host volume access mode (${HOST_VOLUME_ACCESS_MODES.join(', ')})`);
      }
      if (typeof v.AttachmentMode === 'string' && v.AttachmentMode !== '' && !(HOST_VOLUME_ATTACHMENT_MODES as readonly string[]).includes(v.AttachmentMode)) {
        p.add(vp, `attachment_mode ${JSON.stringify(v.AttachmentMode)} is not a host volume attachment mode (${HOST_VOLUME_ATTACHMENT_MODES.join(', ')})`);
      }
    }
    if (v.PerAlloc && (jobType === JobType.System || jobType === JobType.SysBatch)) p.add(vp, `volume cannot be per_alloc for "${jobType}" jobs`);
    if (v.PerAlloc && !v.ReadOnly && (g.Update?.Canary ?? 0) > 0) p.add(vp, 'volume cannot be per_alloc when canaries are in use');
  }
  for (const t of g.Tasks) {
    (t.VolumeMounts ?? []).forEach((m, i) => {
      const mp = `${path}: task "${t.Name}": volume_mount[${i}]`;
      if (typeof m.Volume !== 'string' || m.Volume === '') p.add(mp, `Task ${t.Name} has a volume mount (${i}) referencing an empty volume`);
      else if (!Object.prototype.hasOwnProperty.call(volumes, m.Volume)) p.add(mp, `Task ${t.Name} has a volume mount (${i}) referencing undefined volume ${m.Volume}`);
      if (typeof m.Destination !== 'string' || m.Destination === '') p.add(mp, 'destination is required');
      else if (m.Destination.split('/').includes('..')) p.add(mp, `destination ${JSON.stringify(m.Destination)} must not contain ".."`);
      if (typeof m.ReadOnly !== 'boolean') p.add(mp, `read_only must be a boolean, got ${JSON.stringify(m.ReadOnly)}`);
      if (!(PROPAGATION_MODES as readonly unknown[]).includes(m.PropagationMode)) {
        p.add(mp, `propagation_mode must be one of ${PROPAGATION_MODES.join(', ')}, got ${JSON.stringify(m.PropagationMode)}`);
      }
    });
  }
}

function checkGroup(p: Problems, path: string, g: TaskGroup, jobType = ''): void {
  if (!Number.isInteger(g.Count) || g.Count < 0) p.add(path, `count must be a non-negative whole number, got ${g.Count}`);
  if (g.Tasks.length === 0) p.add(path, 'group has no tasks: add a task block');
  if (g.RestartPolicy) checkRestart(p, path, g.RestartPolicy);
  if (g.ReschedulePolicy) checkReschedule(p, path, g.ReschedulePolicy);
  if (g.Update) checkUpdate(p, path, g.Update);
  if (g.EphemeralDisk && g.EphemeralDisk.SizeMB < 0) p.add(`${path}: ephemeral_disk`, `size must not be negative, got ${g.EphemeralDisk.SizeMB}`);
  checkConstraints(p, path, g.Constraints, 'constraint');
  checkConstraints(p, path, g.Affinities, 'affinity');
  if (g.ShutdownDelay !== null) checkDuration(p, path, 'shutdown_delay', g.ShutdownDelay);
  const ports = new Map<string, string>();
  checkNetworks(p, path, g.Networks, ports);
  checkGroupNetworkSettings(p, path, g.Networks);
  for (const [at, what] of nomadServiceProblems(g.Services)) p.add(`${path}: ${at}`, what);
  for (const [at, what] of serviceCheckProblems(g.Services)) p.add(`${path}: ${at}`, what);
  const names = new Set<string>();
  let leaders = 0;
  g.Tasks.forEach((t, i) => {
    const tp = `${path}: task "${t.Name || `#${i + 1}`}"`;
    checkId(p, tp, 'task name', t.Name);
    if (t.Name !== '' && names.has(t.Name)) p.add(tp, `duplicate task name "${t.Name}"`);
    names.add(t.Name);
    if (t.Leader) leaders++;
    checkNetworks(p, tp, t.Resources.Networks, ports);
    checkTask(p, tp, t, g.RestartPolicy);
  });
  if (leaders > 1) p.add(path, `only one task may be the leader, found ${leaders}`);
  checkVolumes(p, path, g, jobType);
  if (g.Scaling) for (const problem of scalingPolicyProblems(g.Scaling, g.Count)) p.add(`${path}: scaling`, problem);
}

/** What a validation may be told of the server it validates for. */
export interface ValidateJobOptions {
  /**
   * The highest priority admitted (the server's `job_max_priority`); default 100, Nomad's default.
   * A CLI submitting to a server passes JOB_PRIORITY_CEILING and lets the server decide.
   */
  maxPriority?: number;
}

/**
 * Returns every problem of a canonical job (empty when valid). Never throws, whatever the
 * values: the HTTP layer calls it on untrusted input after canonicalizeJob.
 */
export function validateJob(job: Job, opts: ValidateJobOptions = {}): ValidationProblem[] {
  const maxPriority = opts.maxPriority ?? DEFAULT_JOB_MAX_PRIORITY;
  const p = new Problems();
  const path = `job "${job.ID}"`;
  checkId(p, path, 'job ID', job.ID);
  if (job.Name === '') p.add(path, 'job name is required');
  if (job.ID.length > 128) p.add(path, 'job ID must be at most 128 characters');
  const types: readonly string[] = Object.values(JobType);
  if (!types.includes(job.Type)) p.add(path, `unknown job type ${JSON.stringify(job.Type)} (expected one of ${types.join(', ')})`);
  if (!Number.isInteger(job.Priority) || job.Priority < JOB_MIN_PRIORITY || job.Priority > maxPriority) {
    p.add(path, `priority must be between ${JOB_MIN_PRIORITY} and ${maxPriority}, got ${job.Priority}`);
  }
  if (job.Region === '') p.add(path, 'region is required');
  if (job.Datacenters.some((d) => d === '')) p.add(path, 'datacenters must not contain an empty name');
  if (job.TaskGroups.length === 0) p.add(path, 'job has no task groups: add a group block');
  checkConstraints(p, path, job.Constraints, 'constraint');
  checkConstraints(p, path, job.Affinities, 'affinity');

  if (job.Periodic) {
    const pp = `${path}: periodic`;
    if (job.Type === JobType.System || job.Type === JobType.SysBatch) p.add(pp, `periodic can not be used with "${job.Type}" jobs`);
    if (job.Periodic.Enabled && job.Periodic.Spec === '' && !(job.Periodic.Specs ?? []).length) p.add(pp, 'cron is required');
    if (job.Periodic.SpecType !== 'cron') p.add(pp, `unknown spec type ${JSON.stringify(job.Periodic.SpecType)}`);
    for (const spec of [job.Periodic.Spec, ...(job.Periodic.Specs ?? [])]) {
      if (spec !== '' && !/^(@\w+|(\S+\s+){4,6}\S+)$/.test(spec.trim())) p.add(pp, `invalid cron expression ${JSON.stringify(spec)}`);
    }
  }
  if (job.ParameterizedJob) {
    const pp = `${path}: parameterized`;
    if (job.Type === JobType.System) p.add(pp, 'parameterized can not be used with "system" jobs');
    if (!(PAYLOAD_MODES as readonly string[]).includes(job.ParameterizedJob.Payload)) {
      p.add(pp, `payload must be one of ${PAYLOAD_MODES.join(', ')}, got ${JSON.stringify(job.ParameterizedJob.Payload)}`);
    }
    const required = new Set(job.ParameterizedJob.MetaRequired ?? []);
    for (const k of job.ParameterizedJob.MetaOptional ?? []) {
      if (required.has(k)) p.add(pp, `meta key "${k}" is both required and optional`);
    }
  }

  const groups = new Set<string>();
  job.TaskGroups.forEach((g, i) => {
    const gp = `${path}: group "${g.Name || `#${i + 1}`}"`;
    checkId(p, gp, 'group name', g.Name);
    if (g.Name !== '' && groups.has(g.Name)) p.add(gp, `duplicate group name "${g.Name}"`);
    groups.add(g.Name);
    if ((job.Type === JobType.System || job.Type === JobType.SysBatch) && g.Count > 1) {
      p.add(gp, `count must be 0 or 1 for "${job.Type}" jobs, got ${g.Count}`);
    }
    if (job.Type === JobType.Batch || job.Type === JobType.SysBatch) {
      if (g.Update && g.Update.MaxParallel > 0 && g.Update.Canary > 0) p.add(`${gp}: update`, `canary is not supported for "${job.Type}" jobs`);
    }
    checkGroup(p, gp, g, job.Type);
  });
  for (const f of jobFeatureProblems(job)) p.add(f.path, f.message);
  return p.list;
}

/** Throws JobValidationError when validateJob finds problems. */
export function assertValidJob(job: Job, opts: ValidateJobOptions = {}): void {
  const problems = validateJob(job, opts);
  if (problems.length > 0) throw new JobValidationError(problems);
}
