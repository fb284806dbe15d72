/**
 * The API JSON form of a job (`{"Job": {…}}` or the bare job object, PascalCase fields, durations
 * as integer nanoseconds) into a JobDraft. Fields are type-checked by name; unknown fields are
 * ignored as Nomad's JSON decoding ignores them. Free-form maps (Config) are taken as they are.
 */
import { DurationParseError, parseDuration } from '../structs/duration.js';
import { DecodeContext } from './decode-context.js';
import { JobspecParseError } from './jobspec-error.js';
import type { JobDraft } from '../structs/job-draft.js';

type Kind = 'string' | 'number' | 'bool' | 'duration' | 'strings' | 'stringMap' | 'object' | 'array' | 'freeObject' | 'free' | 'identity' | 'identities';

/** Expected kinds of the job model's fields, by field name (names mean the same everywhere). */
const KINDS: Record<string, Kind> = {
  ID: 'string', Name: 'string', Region: 'string', Namespace: 'string', Type: 'string', NodePool: 'string',
  Priority: 'number', AllAtOnce: 'bool', Datacenters: 'strings', Meta: 'stringMap', Env: 'stringMap',
  Constraints: 'array', Affinities: 'array', Spreads: 'array', TaskGroups: 'array', Tasks: 'array',
  Update: 'object', Periodic: 'object', ParameterizedJob: 'object', Stop: 'bool', ParentID: 'string',
  ConsulNamespace: 'string', VaultNamespace: 'string', NomadTokenID: 'string',
  LTarget: 'string', RTarget: 'string', Operand: 'string', Weight: 'number', Attribute: 'string',
  SpreadTarget: 'array', Percent: 'number', Value: 'free',
  Count: 'number', RestartPolicy: 'object', ReschedulePolicy: 'object', EphemeralDisk: 'object',
  Migrate: 'free', Networks: 'array', ShutdownDelay: 'duration', StopAfterClientDisconnect: 'duration',
  MaxClientDisconnect: 'duration', MaxRunDuration: 'duration', Services: 'free', Volumes: 'free', Templates: 'free', Artifacts: 'free', VolumeMounts: 'array',
  Driver: 'string', User: 'string', Lifecycle: 'object', Config: 'freeObject', Resources: 'object',
  KillTimeout: 'duration', LogConfig: 'object', DispatchPayload: 'object', Leader: 'bool', KillSignal: 'string',
  Kind: 'string', Hook: 'string', Sidecar: 'bool',
  Scaling: 'object', Min: 'number', Max: 'number', Policy: 'freeObject', Target: 'stringMap',
  Attempts: 'number', Interval: 'duration', Delay: 'duration', Mode: 'string', DelayFunction: 'string',
  MaxDelay: 'duration', Unlimited: 'bool', RenderTemplates: 'bool',
  Stagger: 'duration', MaxParallel: 'number', HealthCheck: 'string', MinHealthyTime: 'duration',
  HealthyDeadline: 'duration', ProgressDeadline: 'duration', Canary: 'number', AutoRevert: 'bool', AutoPromote: 'bool',
  Enabled: 'bool', Spec: 'string', Specs: 'strings', SpecType: 'string', ProhibitOverlap: 'bool', TimeZone: 'string',
  Payload: 'free', MetaRequired: 'strings', MetaOptional: 'strings',
  Sticky: 'bool', SizeMB: 'number', MaxFiles: 'number', MaxFileSizeMB: 'number', Disabled: 'bool', File: 'string',
  CPU: 'number', Cores: 'number', MemoryMB: 'number', MemoryMaxMB: 'number', DiskMB: 'number', IOPS: 'number', SecretsMB: 'number',
  ReservedPorts: 'array', DynamicPorts: 'array', Label: 'string', To: 'number', HostNetwork: 'string',
  MBits: 'number', Hostname: 'string', DNS: 'free', Device: 'string', CIDR: 'string', IP: 'string',
  // A workload identity's Env and File are booleans, unlike the task's: checked by their own table.
  Identity: 'identity', Identities: 'identities',
  Volume: 'string', Destination: 'string', ReadOnly: 'bool', PropagationMode: 'string', SELinuxLabel: 'string',
  // Kept for registration to refuse by name (job-feature-checks): shapes checked so that a bad
  // one is a 400 naming it, never a crash.
  Multiregion: 'object', Strategy: 'object', OnFailure: 'string', Regions: 'array',
  ScalingPolicies: 'array', Secrets: 'array', Provider: 'string', Path: 'string',
};

/** The fields of a WorkloadIdentity (Nomad's names). */
const IDENTITY_KINDS: Record<string, Kind> = {
  Name: 'string', Audience: 'strings', ChangeMode: 'string', ChangeSignal: 'string', Env: 'bool', File: 'bool',
  Filepath: 'string', TTL: 'duration', ServiceName: 'string',
};

function checkIdentity(value: unknown, path: string, ctx: DecodeContext): unknown {
  if (!isObject(value)) {
    ctx.report(path, 'an identity must be an object', 'Identity');
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const kind = IDENTITY_KINDS[k];
    if (kind === undefined) continue;
    const checked = check(v, k, path, ctx, kind);
    if (checked !== undefined) out[k] = checked;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function segment(key: string, v: unknown): string {
  if (isObject(v) && typeof v.Name === 'string') {
    if (key === 'TaskGroups') return `group "${v.Name}"`;
    if (key === 'Tasks') return `task "${v.Name}"`;
  }
  return key;
}

function check(value: unknown, key: string, path: string, ctx: DecodeContext, kind: Kind | undefined = KINDS[key]): unknown {
  if (kind === undefined || kind === 'free' || value === null || value === undefined) return value;
  const bad = (what: string): undefined => {
    ctx.report(path, `${key} must be ${what}, got ${JSON.stringify(value)}`, key);
    return undefined;
  };
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? value : bad('a string');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : bad('a number');
    case 'bool':
      return typeof value === 'boolean' ? value : bad('a boolean');
    case 'duration':
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      if (typeof value === 'string') {
        try {
          return parseDuration(value);
        } catch (e) {
          if (!(e instanceof DurationParseError)) throw e;
        }
      }
      return bad('a duration in nanoseconds');
    case 'strings':
      return Array.isArray(value) && value.every((s) => typeof s === 'string') ? value : bad('a list of strings');
    case 'stringMap':
      if (!isObject(value)) return bad('a map of strings');
      for (const [k, v] of Object.entries(value)) {
        if (typeof v !== 'string') ctx.report(path, `${key}.${k} must be a string, got ${JSON.stringify(v)}`, k);
      }
      return value;
    case 'freeObject':
      return isObject(value) ? value : bad('an object');
    case 'identity':
      return checkIdentity(value, path ? `${path}: ${key}` : key, ctx);
    case 'identities':
      if (!Array.isArray(value)) return bad('a list');
      return value.map((item, i) => checkIdentity(item, `${path}: ${key}[${i}]`, ctx));
    case 'object':
      return isObject(value) ? walkObject(value, path ? `${path}: ${key}` : key, ctx) : bad('an object');
    case 'array':
      if (!Array.isArray(value)) return bad('a list');
      return value.map((item, i) => {
        if (!isObject(item)) {
          ctx.report(path, `${key}[${i}] must be an object`, key);
          return item;
        }
        const seg = segment(key, item);
        return walkObject(item, path ? `${path}: ${seg === key ? `${key}[${i}]` : seg}` : seg, ctx);
      });
    default: {
      const never: never = kind;
      return never;
    }
  }
}

function walkObject(obj: Record<string, unknown>, path: string, ctx: DecodeContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    const checked = check(v, k, path, ctx);
    if (checked !== undefined) out[k] = checked;
  }
  return out;
}

/**
 * Decodes API JSON (`{"Job": {…}}` or a bare job). Returns undefined (with a problem recorded)
 * when the value is not a job object.
 */
export function jobFromApiJson(value: unknown, ctx: DecodeContext): JobDraft | undefined {
  const job = isObject(value) && isObject(value.Job) ? value.Job : value;
  if (!isObject(job)) {
    ctx.report('', 'expected a JSON object with a "Job" field or a job object');
    return undefined;
  }
  const id = typeof job.ID === 'string' ? job.ID : typeof job.Name === 'string' ? job.Name : '';
  return walkObject(job, `job "${id}"`, ctx) as JobDraft;
}

/**
 * Decodes an API request body's job (`{"Job": …}` or a bare job) for the HTTP layer: throws
 * JobspecParseError naming each mistyped field (file "request"). Canonicalize and validate after.
 */
export function decodeApiJob(value: unknown): JobDraft {
  const ctx = new DecodeContext('request', '');
  const draft = jobFromApiJson(value, ctx);
  if (ctx.problems.length > 0 || draft === undefined) throw new JobspecParseError(ctx.problems);
  return draft;
}
