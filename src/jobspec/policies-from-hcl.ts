/**
 * Decoding of the small policy blocks shared by jobs, groups and tasks: restart, reschedule,
 * update, migrate, ephemeral_disk, periodic, parameterized, logs, lifecycle, network. Each
 * returns only the fields the block set; defaults are filled later by canonicalizeJob.
 */
import type { Port } from '../structs/resources.js';
import type { HclBody } from './hcl-body.js';
import type { DeepPartial, JobDraft, TaskDraft, TaskGroupDraft } from '../structs/job-draft.js';

type Draft<K extends keyof TaskGroupDraft> = NonNullable<TaskGroupDraft[K]>;

/** Copies the defined values of `fields` onto a new object (skips undefined). */
function defined<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** `restart { attempts, interval, delay, mode, render_templates }`. */
export function restartFromHcl(b: HclBody): Draft<'RestartPolicy'> {
  const r = defined({
    Attempts: b.number('attempts'),
    Interval: b.duration('interval'),
    Delay: b.duration('delay'),
    Mode: b.string('mode') as Draft<'RestartPolicy'>['Mode'],
    RenderTemplates: b.bool('render_templates'),
  });
  b.finish();
  return r;
}

/** `reschedule { attempts, interval, delay, delay_function, max_delay, unlimited }`. */
export function rescheduleFromHcl(b: HclBody): Draft<'ReschedulePolicy'> {
  const r = defined({
    Attempts: b.number('attempts'),
    Interval: b.duration('interval'),
    Delay: b.duration('delay'),
    DelayFunction: b.string('delay_function') as Draft<'ReschedulePolicy'>['DelayFunction'],
    MaxDelay: b.duration('max_delay'),
    Unlimited: b.bool('unlimited'),
  });
  b.finish();
  return r;
}

/** `update { max_parallel, health_check, min_healthy_time, … canary, auto_revert, auto_promote, stagger }`. */
export function updateFromHcl(b: HclBody): Draft<'Update'> {
  const u = defined({
    Stagger: b.duration('stagger'),
    MaxParallel: b.number('max_parallel'),
    HealthCheck: b.string('health_check'),
    MinHealthyTime: b.duration('min_healthy_time'),
    HealthyDeadline: b.duration('healthy_deadline'),
    ProgressDeadline: b.duration('progress_deadline'),
    Canary: b.number('canary'),
    AutoRevert: b.bool('auto_revert'),
    AutoPromote: b.bool('auto_promote'),
  });
  b.finish();
  return u;
}

/** `migrate { max_parallel, health_check, min_healthy_time, healthy_deadline }`. */
export function migrateFromHcl(b: HclBody): Draft<'Migrate'> {
  const m = defined({
    MaxParallel: b.number('max_parallel'),
    HealthCheck: b.string('health_check'),
    MinHealthyTime: b.duration('min_healthy_time'),
    HealthyDeadline: b.duration('healthy_deadline'),
  });
  b.finish();
  return m;
}

/** `ephemeral_disk { sticky, migrate, size }` (size in MB). */
export function ephemeralDiskFromHcl(b: HclBody): Draft<'EphemeralDisk'> {
  const d = defined({ Sticky: b.bool('sticky'), Migrate: b.bool('migrate'), SizeMB: b.number('size') });
  b.finish();
  return d;
}

/** `periodic { cron | crons, prohibit_overlap, time_zone, enabled }`. */
export function periodicFromHcl(b: HclBody): NonNullable<JobDraft['Periodic']> {
  const cron = b.string('cron');
  const crons = b.stringList('crons');
  const p = defined({
    Spec: cron ?? crons?.[0],
    Specs: crons,
    SpecType: b.string('spec_type'),
    ProhibitOverlap: b.bool('prohibit_overlap'),
    TimeZone: b.string('time_zone'),
    Enabled: b.bool('enabled'),
  });
  if (cron !== undefined && crons !== undefined) b.problem('crons', 'only one of "cron" and "crons" may be set');
  b.finish();
  return p;
}

/** `parameterized { payload, meta_required, meta_optional }`. */
export function parameterizedFromHcl(b: HclBody): NonNullable<JobDraft['ParameterizedJob']> {
  const p = defined({
    Payload: b.string('payload'),
    MetaRequired: b.stringList('meta_required'),
    MetaOptional: b.stringList('meta_optional'),
  });
  b.finish();
  return p;
}

/** `logs { max_files, max_file_size, disabled }` (`enabled = false` also disables). */
export function logsFromHcl(b: HclBody): NonNullable<TaskDraft['LogConfig']> {
  const enabled = b.bool('enabled');
  const disabled = b.bool('disabled');
  const l = defined({
    MaxFiles: b.number('max_files'),
    MaxFileSizeMB: b.number('max_file_size'),
    Disabled: disabled ?? (enabled !== undefined ? !enabled : undefined),
  });
  b.finish();
  return l;
}

/** `lifecycle { hook, sidecar }`. */
export function lifecycleFromHcl(b: HclBody): NonNullable<TaskDraft['Lifecycle']> {
  const l = defined({
    Hook: b.string('hook') as NonNullable<TaskDraft['Lifecycle']>['Hook'],
    Sidecar: b.bool('sidecar'),
  });
  b.finish();
  return l;
}

/**
 * `network { mode, hostname, mbits, dns {…}, port "label" { static, to, host_network } }`:
 * ports with `static` are reserved, the others dynamic (chosen at placement).
 */
export function networkFromHcl(b: HclBody): Draft<'Networks'>[number] {
  const reserved: DeepPartial<Port>[] = [];
  const dynamic: DeepPartial<Port>[] = [];
  for (const { label, body } of b.labelled('port')) {
    const stat = body.number('static');
    const port = defined({
      Label: label,
      Value: stat ?? 0,
      To: body.number('to') ?? 0,
      HostNetwork: body.string('host_network'),
    });
    body.finish();
    (stat !== undefined ? reserved : dynamic).push(port);
  }
  const dnsBody = b.block('dns');
  let dns: Draft<'Networks'>[number]['DNS'];
  if (dnsBody) {
    dns = {
      Servers: dnsBody.stringList('servers') ?? [],
      Searches: dnsBody.stringList('searches') ?? [],
      Options: dnsBody.stringList('options') ?? [],
    };
    dnsBody.finish();
  }
  // `cni { args = {…} }`: kept for CNI network modes (CNI_ARGS).
  const cniBody = b.block('cni');
  let cni: Draft<'Networks'>[number]['CNI'];
  if (cniBody) {
    cni = { Args: cniBody.stringMap('args') ?? null };
    cniBody.finish();
  }
  const n = defined({
    Mode: b.string('mode'),
    Hostname: b.string('hostname'),
    MBits: b.number('mbits'),
    DNS: dns,
    CNI: cni,
    ReservedPorts: reserved.length > 0 ? reserved : undefined,
    DynamicPorts: dynamic.length > 0 ? dynamic : undefined,
  });
  b.finish();
  return n;
}
