/**
 * The environment of a task: Nomad's NOMAD_* variables built from the allocation, the task,
 * the node and the task's directories, followed by the task's own `env` block (interpolated
 * against the former).
 */
import type { Allocation } from '../../structs/alloc.js';
import type { Task, TaskGroup } from '../../structs/job.js';
import type { ClientHostVolumeConfig } from '../../structs/host-volume.js';
import type { Port } from '../../structs/resources.js';
import type { TaskDirs } from '../../drivers/driver.js';
import { interpolateString, interpolateValue, type InterpolationScope } from './interpolate.js';
import type { HostEnvLookup } from './host-env.js';

/** What the env builder needs to know about the node. */
export interface NodeInfo {
  id: string;
  name: string;
  datacenter: string;
  region: string;
  nodeClass: string;
  attributes: Record<string, string>;
  meta: Record<string, string>;
  /** The host volumes this client offers (Node.HostVolumes); absent: none. */
  hostVolumes?: Record<string, ClientHostVolumeConfig>;
}

/** Inputs of buildTaskEnv. */
export interface TaskEnvInput {
  alloc: Allocation;
  group: TaskGroup;
  task: Task;
  node: NodeInfo;
  /** Paths as the task sees them. */
  dirs: TaskDirs;
  /** The agent's own environment, for `${env.X}` of variables the task does not set (never those of the env.denylist). */
  hostEnv?: HostEnvLookup;
  /**
   * The allocation's address in its own network namespace (group network bridge or cni/*):
   * NOMAD_ALLOC_IP_* and NOMAD_ALLOC_ADDR_* name it; else they name the host's.
   */
  allocAddress?: string;
}

/** The built environment and the scope to interpolate task config with. */
export interface TaskEnv {
  env: Record<string, string>;
  scope: InterpolationScope;
}

/** The allocation index: the number in brackets at the end of its name ("web.api[2]" → 2). */
export function allocIndex(name: string): number {
  const m = /\[(\d+)\]$/.exec(name);
  return m ? Number(m[1]) : 0;
}

/** Builds NOMAD_* variables plus the task's interpolated env. */
export function buildTaskEnv(input: TaskEnvInput): TaskEnv {
  const { alloc, group, task, node, dirs } = input;
  const job = alloc.Job;
  const env: Record<string, string> = {};
  env.NOMAD_ALLOC_ID = alloc.ID;
  env.NOMAD_SHORT_ALLOC_ID = alloc.ID.slice(0, 8);
  env.NOMAD_ALLOC_NAME = alloc.Name;
  env.NOMAD_ALLOC_INDEX = String(allocIndex(alloc.Name));
  env.NOMAD_JOB_ID = job?.ID ?? alloc.JobID;
  env.NOMAD_JOB_NAME = job?.Name ?? alloc.JobID;
  if (job?.ParentID) env.NOMAD_JOB_PARENT_ID = job.ParentID;
  env.NOMAD_GROUP_NAME = group.Name;
  env.NOMAD_TASK_NAME = task.Name;
  env.NOMAD_DC = node.datacenter;
  env.NOMAD_REGION = job?.Region || node.region;
  env.NOMAD_NAMESPACE = alloc.Namespace || 'default';
  env.NOMAD_ALLOC_DIR = dirs.sharedAllocDir;
  env.NOMAD_TASK_DIR = dirs.localDir;
  env.NOMAD_SECRETS_DIR = dirs.secretsDir;

  const tr = alloc.AllocatedResources?.Tasks?.[task.Name];
  const cpu = tr?.Cpu.CpuShares ?? task.Resources?.CPU ?? 0;
  const mem = tr?.Memory.MemoryMB ?? task.Resources?.MemoryMB ?? 0;
  const memMax = tr?.Memory.MemoryMaxMB ?? task.Resources?.MemoryMaxMB ?? 0;
  env.NOMAD_CPU_LIMIT = String(cpu);
  const cores = tr?.Cpu.ReservedCores;
  if (cores && cores.length > 0) env.NOMAD_CPU_CORES = cores.join(',');
  env.NOMAD_MEMORY_LIMIT = String(mem);
  if (memMax > 0) env.NOMAD_MEMORY_MAX_LIMIT = String(memMax);

  // Meta: job, then group, then task, later ones winning, as Nomad merges them.
  const meta: Record<string, string> = { ...(job?.Meta ?? {}), ...(group.Meta ?? {}), ...(task.Meta ?? {}) };
  for (const [k, v] of Object.entries(meta)) {
    env[`NOMAD_META_${k.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`] = v;
    env[`NOMAD_META_${k}`] = v;
  }

  for (const p of allocPorts(alloc)) {
    const label = p.label.replace(/[^A-Za-z0-9_]/g, '_');
    const to = p.to > 0 ? p.to : p.value;
    env[`NOMAD_IP_${label}`] = p.ip;
    env[`NOMAD_PORT_${label}`] = String(to);
    env[`NOMAD_HOST_PORT_${label}`] = String(p.value);
    env[`NOMAD_ADDR_${label}`] = `${p.ip}:${p.value}`;
    env[`NOMAD_HOST_IP_${label}`] = p.ip;
    env[`NOMAD_HOST_ADDR_${label}`] = `${p.ip}:${p.value}`;
    // The port as the allocation's own address serves it: `to` inside a namespace.
    const allocIp = input.allocAddress || p.ip;
    env[`NOMAD_ALLOC_PORT_${label}`] = String(to);
    env[`NOMAD_ALLOC_IP_${label}`] = allocIp;
    env[`NOMAD_ALLOC_ADDR_${label}`] = `${allocIp}:${input.allocAddress ? to : p.value}`;
  }

  const scope: InterpolationScope = {
    env: { ...env },
    ...(input.hostEnv ? { hostEnv: input.hostEnv } : {}),
    node: {
      'unique.id': node.id,
      'unique.name': node.name,
      datacenter: node.datacenter,
      region: node.region,
      class: node.nodeClass,
    },
    attributes: node.attributes,
    meta: node.meta,
  };
  for (const [k, v] of Object.entries(task.Env ?? {})) {
    const value = interpolateString(String(v), scope);
    env[k] = value;
    scope.env[k] = value;
  }
  return { env, scope };
}

/** Interpolates a task's driver config against a built env. */
export function interpolateTaskConfig(config: Record<string, unknown>, te: TaskEnv): Record<string, unknown> {
  return interpolateValue(config, te.scope) as Record<string, unknown>;
}

interface PortBinding {
  label: string;
  value: number;
  to: number;
  ip: string;
}

function allocPorts(alloc: Allocation): PortBinding[] {
  const out: PortBinding[] = [];
  const shared = alloc.AllocatedResources?.Shared;
  for (const p of shared?.Ports ?? []) out.push({ label: p.Label, value: p.Value, to: p.To, ip: p.HostIP || '127.0.0.1' });
  if (out.length > 0) return out;
  for (const n of shared?.Networks ?? []) {
    const ports: Port[] = [...(n.ReservedPorts ?? []), ...(n.DynamicPorts ?? [])];
    for (const p of ports) out.push({ label: p.Label, value: p.Value, to: p.To, ip: n.IP || '127.0.0.1' });
  }
  return out;
}
