/** Decoding of a `task "name" { … }` block and its `resources` block. */
import type { HclBody } from './hcl-body.js';
import type { TaskDraft } from '../structs/job-draft.js';
import { placementFromHcl } from './placement-from-hcl.js';
import { lifecycleFromHcl, logsFromHcl, networkFromHcl, restartFromHcl } from './policies-from-hcl.js';
import { serviceFromHcl } from './service-from-hcl.js';
import { artifactFromHcl, templateFromHcl } from './template-from-hcl.js';
import { identitiesFromHcl } from './identity-from-hcl.js';
import { volumeMountsFromHcl } from './volume-from-hcl.js';
import { apiStructFromHcl } from './api-struct-from-hcl.js';
import { devicesFromHcl } from './device-from-hcl.js';
import { taskScalingPoliciesFromHcl } from './scaling-from-hcl.js';
import { secretsFromHcl } from './secret-from-hcl.js';
import type { TaskAction } from '../structs/job.js';


/** `resources { cpu, cores, memory, memory_max, disk, network, device }`. */
function resourcesFromHcl(b: HclBody): NonNullable<TaskDraft['Resources']> {
  const r: NonNullable<TaskDraft['Resources']> = {};
  const cpu = b.number('cpu');
  if (cpu !== undefined) r.CPU = cpu;
  const cores = b.number('cores');
  if (cores !== undefined) r.Cores = cores;
  const memory = b.number('memory');
  if (memory !== undefined) r.MemoryMB = memory;
  const memoryMax = b.number('memory_max');
  if (memoryMax !== undefined) r.MemoryMaxMB = memoryMax;
  const disk = b.number('disk');
  if (disk !== undefined) r.DiskMB = disk;
  const iops = b.number('iops');
  if (iops !== undefined) r.IOPS = iops;
  const nets = b.blocks('network').map(networkFromHcl);
  if (nets.length > 0) r.Networks = nets;
  const devices = devicesFromHcl(b);
  if (devices) r.Devices = devices;
  b.finish();
  return r;
}

/** Decodes a task block; unknown attributes and blocks are reported with their line. */
export function taskFromHcl(name: string, b: HclBody): TaskDraft {
  const t: TaskDraft = { Name: name };
  const str = (key: string, set: (v: string) => void): void => {
    const v = b.string(key);
    if (v !== undefined) set(v);
  };
  str('driver', (v) => (t.Driver = v));
  str('user', (v) => (t.User = v));
  str('kill_signal', (v) => (t.KillSignal = v));
  str('kind', (v) => (t.Kind = v));
  const leader = b.bool('leader');
  if (leader !== undefined) t.Leader = leader;
  const killTimeout = b.duration('kill_timeout');
  if (killTimeout !== undefined) t.KillTimeout = killTimeout;
  const shutdownDelay = b.duration('shutdown_delay');
  if (shutdownDelay !== undefined) t.ShutdownDelay = shutdownDelay;
  const config = b.freeMap('config');
  if (config !== undefined) t.Config = config;
  const env = b.stringMap('env');
  if (env !== undefined) t.Env = env;
  const meta = b.stringMap('meta');
  if (meta !== undefined) t.Meta = meta;

  const resources = b.block('resources');
  if (resources) t.Resources = resourcesFromHcl(resources);
  const lifecycle = b.block('lifecycle');
  if (lifecycle) t.Lifecycle = lifecycleFromHcl(lifecycle);
  const restart = b.block('restart');
  if (restart) t.RestartPolicy = restartFromHcl(restart);
  const logs = b.block('logs');
  if (logs) t.LogConfig = logsFromHcl(logs);
  const payload = b.block('dispatch_payload');
  if (payload) {
    t.DispatchPayload = { File: payload.string('file') ?? '' };
    payload.finish();
  }
  const placement = placementFromHcl(b, false);
  if (placement.Constraints) t.Constraints = placement.Constraints;
  if (placement.Affinities) t.Affinities = placement.Affinities;

  const services = b.blocks('service').map(serviceFromHcl);
  if (services.length > 0) t.Services = services as TaskDraft['Services'];
  const templates = b.blocks('template').map(templateFromHcl);
  if (templates.length > 0) t.Templates = templates;
  const artifacts = b.blocks('artifact').map(artifactFromHcl);
  if (artifacts.length > 0) t.Artifacts = artifacts;
  Object.assign(t, identitiesFromHcl(b));
  const mounts = volumeMountsFromHcl(b);
  if (mounts) t.VolumeMounts = mounts;
  const maxRun = b.duration('max_run_duration');
  if (maxRun !== undefined) t.MaxRunDuration = maxRun;
  const secrets = secretsFromHcl(b);
  if (secrets) t.Secrets = secrets;
  const scaling = taskScalingPoliciesFromHcl(b);
  if (scaling) t.ScalingPolicies = scaling;
  const actions = b.labelled('action').map(({ label, body }) => actionFromHcl(label, body));
  if (actions.length > 0) t.Actions = actions;
  // Kept as written so `job validate` and registration can name them; Caravan runs none.
  for (const [key, field] of [['vault', 'Vault'], ['consul', 'Consul'], ['csi_plugin', 'CSIPluginConfig'], ['schedule', 'Schedule']] as const) {
    if (b.has(key)) t[field] = apiStructFromHcl(b.rawValue(key));
  }
  b.finish();
  return t;
}

/** `action "name" { command = "…" args = [...] }`. */
function actionFromHcl(name: string, b: HclBody): TaskAction {
  const command = b.string('command');
  if (command === undefined) b.problem('command', `action "${name}": "command" is required`);
  const args = b.stringList('args');
  b.finish();
  return { Name: name, Command: command ?? '', Args: args ?? null };
}
