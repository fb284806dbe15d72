/**
 * Decoding of `service` blocks (task or group) and their `check` and `check_restart` blocks into
 * Nomad's API shape: Service{Name, PortLabel, Tags, …, Checks: [ServiceCheck{…, Interval, Timeout}]}.
 * Only the fields the block sets are returned; defaults come from canonicalizeService.
 */
import { apiStructFromHcl } from './api-struct-from-hcl.js';
import type { CheckRestart, ServiceCheck, ServiceInput } from '../structs/service.js';
import { ServiceProvider } from '../structs/service.js';
import { NANOS_PER_SECOND } from '../structs/duration.js';
import type { HclBody } from './hcl-body.js';

/** Check types Nomad knows. */
const CHECK_TYPES = ['http', 'tcp', 'script', 'grpc'] as const;
const ADDRESS_MODES = ['alloc', 'auto', 'driver', 'host'] as const;
const ON_UPDATE = ['require_healthy', 'ignore_warnings', 'ignore'] as const;

/** Copies the defined values of `fields` onto a new object (skips undefined). */
function defined<T extends object>(fields: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out as T;
}

function oneOf(b: HclBody, key: string, value: string | undefined, allowed: readonly string[]): string | undefined {
  if (value !== undefined && !allowed.includes(value)) {
    b.problem(key, `"${key}" must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** `check_restart { limit, grace, ignore_warnings }`. */
function checkRestartFromHcl(b: HclBody): Partial<CheckRestart> {
  const r = defined({ Limit: b.number('limit'), Grace: b.duration('grace'), IgnoreWarnings: b.bool('ignore_warnings') });
  b.finish();
  return r;
}

/** `header { Name = ["v1", "v2"] }`: each value a string or a list of strings. */
function headerFromHcl(b: HclBody): Record<string, string[]> | undefined {
  const raw = b.freeMap('header');
  if (raw === undefined) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(raw)) {
    const list = Array.isArray(v) ? v : [v];
    if (!list.every((x) => typeof x === 'string')) {
      b.problem('header', `"header.${k}" must be a string or a list of strings`);
      continue;
    }
    out[k] = list as string[];
  }
  return out;
}

/** One `check { … }` block, validated as Nomad does (type, interval and timeout). */
function checkFromHcl(b: HclBody): Partial<ServiceCheck> {
  const type = oneOf(b, 'type', b.string('type'), CHECK_TYPES);
  const restart = b.block('check_restart');
  const c = defined({
    Name: b.string('name'),
    Type: type,
    Command: b.string('command'),
    Args: b.stringList('args'),
    Path: b.string('path'),
    Protocol: b.string('protocol'),
    PortLabel: b.string('port'),
    Expose: b.bool('expose'),
    AddressMode: oneOf(b, 'address_mode', b.string('address_mode'), ADDRESS_MODES),
    Interval: b.duration('interval'),
    Timeout: b.duration('timeout'),
    InitialStatus: oneOf(b, 'initial_status', b.string('initial_status'), ['passing', 'warning', 'critical']),
    TLSServerName: b.string('tls_server_name'),
    TLSSkipVerify: b.bool('tls_skip_verify'),
    Header: headerFromHcl(b),
    Method: b.string('method'),
    Body: b.string('body'),
    GRPCService: b.string('grpc_service'),
    GRPCUseTLS: b.bool('grpc_use_tls'),
    SuccessBeforePassing: b.number('success_before_passing'),
    FailuresBeforeCritical: b.number('failures_before_critical'),
    FailuresBeforeWarning: b.number('failures_before_warning'),
    OnUpdate: oneOf(b, 'on_update', b.string('on_update'), ON_UPDATE),
    TaskName: b.string('task'),
    CheckRestart: restart ? (checkRestartFromHcl(restart) as CheckRestart) : undefined,
  });
  b.rawValue('notes');
  // A check without a type, an http check without a path and a script check without a
  // command parse, as on Nomad (its own fixtures have them); validation refuses them
  // (service-check-validate), so the file's other problems are seen at once.
  // Nomad: every check polls at most once a second and times out after at least a second.
  if (b.has('interval') && c.Interval !== undefined && c.Interval < NANOS_PER_SECOND) b.problem('interval', '"interval" must be at least 1s');
  if (b.has('timeout') && c.Timeout !== undefined && c.Timeout < NANOS_PER_SECOND) b.problem('timeout', '"timeout" must be at least 1s');
  // A missing interval or timeout parses, as on Nomad; validation refuses it (service-check-validate).
  b.finish();
  return c;
}

/** One `service { … }` block into the API Service shape (fields the block sets). */
export function serviceFromHcl(b: HclBody): ServiceInput {
  const restart = b.block('check_restart');
  const s: ServiceInput = defined({
    Name: b.string('name'),
    Tags: b.stringList('tags'),
    CanaryTags: b.stringList('canary_tags'),
    EnableTagOverride: b.bool('enable_tag_override'),
    PortLabel: b.string('port'),
    AddressMode: oneOf(b, 'address_mode', b.string('address_mode'), ADDRESS_MODES),
    Address: b.string('address'),
    Meta: b.stringMap('meta'),
    CanaryMeta: b.stringMap('canary_meta'),
    TaggedAddresses: b.stringMap('tagged_addresses'),
    TaskName: b.string('task'),
    OnUpdate: oneOf(b, 'on_update', b.string('on_update'), ON_UPDATE),
    Provider: oneOf(b, 'provider', b.string('provider'), Object.values(ServiceProvider)),
    CheckRestart: restart ? (checkRestartFromHcl(restart) as CheckRestart) : undefined,
  });
  const checks = b.blocks('check').map(checkFromHcl);
  // Kept so registration can refuse it by name; Caravan has no Consul Connect.
  const connect = b.has('connect') ? apiStructFromHcl(b.rawValue('connect')) : undefined;
  if (checks.length > 0) s.Checks = checks;
  if (connect) s.Connect = connect;
  b.finish();
  return s;
}
