/**
 * Decoding of the hcl2json tree of a job file (after variables are resolved) into a JobDraft:
 * the `job "id" { … }` block and its `group` blocks. Every problem is collected in the
 * DecodeContext; nothing here fills defaults.
 */
import type { JobType } from '../structs/job.js';
import { HclBody } from './hcl-body.js';
import type { DecodeContext } from './decode-context.js';
import type { JobDraft, TaskGroupDraft } from '../structs/job-draft.js';
import { placementFromHcl } from './placement-from-hcl.js';
import {
  ephemeralDiskFromHcl,
  migrateFromHcl,
  networkFromHcl,
  parameterizedFromHcl,
  periodicFromHcl,
  rescheduleFromHcl,
  restartFromHcl,
  updateFromHcl,
} from './policies-from-hcl.js';
import { serviceFromHcl } from './service-from-hcl.js';
import { taskFromHcl } from './task-from-hcl.js';
import { volumesFromHcl } from './volume-from-hcl.js';
import { multiregionFromHcl } from './multiregion-from-hcl.js';
import { apiStructFromHcl } from './api-struct-from-hcl.js';
import { scalingFromHcl } from './scaling-from-hcl.js';

/** Group-level blocks kept as given but not acted on. */
const PASSTHROUGH_GROUP_KEYS = ['disconnect'] as const;

function groupFromHcl(name: string, b: HclBody): TaskGroupDraft {
  const g: TaskGroupDraft = { Name: name };
  const count = b.number('count');
  if (count !== undefined) g.Count = count;
  const meta = b.stringMap('meta');
  if (meta !== undefined) g.Meta = meta;
  const shutdownDelay = b.duration('shutdown_delay');
  if (shutdownDelay !== undefined) g.ShutdownDelay = shutdownDelay;
  const stopAfter = b.duration('stop_after_client_disconnect');
  if (stopAfter !== undefined) g.StopAfterClientDisconnect = stopAfter;
  const maxDisconnect = b.duration('max_client_disconnect');
  if (maxDisconnect !== undefined) g.MaxClientDisconnect = maxDisconnect;

  const restart = b.block('restart');
  if (restart) g.RestartPolicy = restartFromHcl(restart);
  const reschedule = b.block('reschedule');
  if (reschedule) g.ReschedulePolicy = rescheduleFromHcl(reschedule);
  const disk = b.block('ephemeral_disk');
  if (disk) g.EphemeralDisk = ephemeralDiskFromHcl(disk);
  const update = b.block('update');
  if (update) g.Update = updateFromHcl(update);
  const migrate = b.block('migrate');
  if (migrate) g.Migrate = migrateFromHcl(migrate);
  const networks = b.blocks('network').map(networkFromHcl);
  if (networks.length > 0) g.Networks = networks;
  Object.assign(g, placementFromHcl(b, true));
  const services = b.blocks('service').map(serviceFromHcl);
  if (services.length > 0) g.Services = services as TaskGroupDraft['Services'];
  const scaling = b.block('scaling');
  if (scaling) g.Scaling = scalingFromHcl(scaling);
  const maxRun = b.duration('max_run_duration');
  if (maxRun !== undefined) g.MaxRunDuration = maxRun;
  // Kept so registration can refuse it by name; Caravan has no Consul.
  if (b.has('consul')) g.Consul = apiStructFromHcl(b.rawValue('consul'));

  const volumes = volumesFromHcl(b);
  if (volumes) g.Volumes = volumes;
  for (const key of PASSTHROUGH_GROUP_KEYS) {
    if (b.has(key)) b.rawValue(key);
  }

  // Nomad's decodeTaskGroup: a group's vault block applies to each of its tasks without one
  // (registration then refuses it: Caravan has no Vault).
  const vault = b.has('vault') ? apiStructFromHcl(b.rawValue('vault')) : undefined;
  const tasks = b.labelled('task');
  g.Tasks = tasks.map(({ label, body }) => taskFromHcl(label, body));
  if (vault) for (const t of g.Tasks) if (t && !t.Vault) t.Vault = vault;
  b.finish();
  return g;
}

/** Decodes the body of `job "<id>" { … }`. */
export function jobBodyFromHcl(id: string, b: HclBody): JobDraft {
  const str = (key: string): string | undefined => b.string(key);
  // Nomad's normalizeJob: `id` and `name` default to the block's label, each on its own.
  const j: JobDraft = { ID: str('id') ?? id };
  j.Name = str('name') ?? id;
  const type = str('type');
  if (type !== undefined) j.Type = type as JobType;
  const region = str('region');
  if (region !== undefined) j.Region = region;
  const namespace = str('namespace');
  if (namespace !== undefined) j.Namespace = namespace;
  const nodePool = str('node_pool');
  if (nodePool !== undefined) j.NodePool = nodePool;
  const priority = b.number('priority');
  if (priority !== undefined) j.Priority = priority;
  const datacenters = b.stringList('datacenters');
  if (datacenters !== undefined) j.Datacenters = datacenters;
  const allAtOnce = b.bool('all_at_once');
  if (allAtOnce !== undefined) j.AllAtOnce = allAtOnce;
  const meta = b.stringMap('meta');
  if (meta !== undefined) j.Meta = meta;
  // Nomad's legacy token fields: decoded as Nomad does, refused at registration (no Consul, no Vault).
  const consulToken = str('consul_token');
  if (consulToken !== undefined) j.ConsulToken = consulToken;
  const vaultToken = str('vault_token');
  if (vaultToken !== undefined) j.VaultToken = vaultToken;
  Object.assign(j, placementFromHcl(b, true));
  const selections = b.labelled('group_selection').map(({ label, body }) => {
    const count = body.number('count');
    const groups = body.stringList('groups');
    body.finish();
    return { Name: label, ...(count !== undefined ? { Count: count } : {}), Groups: groups ?? [] };
  });
  if (selections.length > 0) j.GroupSelections = selections;

  const update = b.block('update');
  if (update) j.Update = updateFromHcl(update);
  const ui = b.block('ui');
  if (ui) {
    const links = ui.blocks('link').map((l) => {
      const link = { Label: l.string('label') ?? '', URL: l.string('url') ?? '' };
      l.finish();
      return link;
    });
    j.UI = { Description: ui.string('description') ?? '', Links: links.length > 0 ? links : null };
    ui.finish();
  }
  const multiregion = b.block('multiregion');
  if (multiregion) j.Multiregion = multiregionFromHcl(multiregion);
  const periodic = b.block('periodic');
  if (periodic) j.Periodic = periodicFromHcl(periodic);
  const parameterized = b.block('parameterized');
  if (parameterized) j.ParameterizedJob = parameterizedFromHcl(parameterized);
  // Nomad allows job-level reschedule/migrate/restart-less defaults that groups inherit.
  const reschedule = b.block('reschedule');
  const migrate = b.block('migrate');
  const jobReschedule = reschedule ? rescheduleFromHcl(reschedule) : undefined;
  const jobMigrate = migrate ? migrateFromHcl(migrate) : undefined;

  // Nomad: a task written directly in the job runs in a group of its own, named after it,
  // placed before the job's groups.
  const alone: TaskGroupDraft[] = b.labelled('task').map(({ label, body }) => ({ Name: label, Tasks: [taskFromHcl(label, body)] }));
  const groups = b.labelled('group');
  j.TaskGroups = [...alone, ...groups.map(({ label, body }) => groupFromHcl(label, body))].map((g) => {
    if (jobReschedule) g.ReschedulePolicy = { ...jobReschedule, ...g.ReschedulePolicy };
    if (jobMigrate) g.Migrate = { ...jobMigrate, ...g.Migrate };
    return g;
  });
  // Nomad: a job-level vault block applies to every task without its own.
  if (b.has('vault')) {
    const vault = apiStructFromHcl(b.rawValue('vault'));
    for (const g of j.TaskGroups) for (const t of g.Tasks ?? []) if (t && !t.Vault) t.Vault = vault;
  }
  b.finish();
  return j;
}

/**
 * Decodes a whole file's tree: exactly one `job` block (variables and locals were consumed
 * before). Returns undefined when there is no usable job block (problems recorded).
 */
export function jobFromHclTree(tree: Record<string, unknown>, ctx: DecodeContext): JobDraft | undefined {
  const root = new HclBody(tree, '', ctx, 0);
  root.rawValue('variable');
  root.rawValue('variables');
  root.rawValue('locals');
  const jobs = root.labelled('job');
  root.finish();
  if (jobs.length === 0) {
    if (!ctx.problems.length) ctx.report('', 'no job block found: expected job "<name>" { … }');
    return undefined;
  }
  if (jobs.length > 1) ctx.report('', `only one job block is allowed per file, found ${jobs.length}`, 'job');
  const { label, body } = jobs[0]!;
  return jobBodyFromHcl(label, body);
}
