/**
 * Decides whether a job update to a task group needs new allocations (destructive update) or
 * can be applied to the running ones in place. Follows Nomad's tasksUpdated rules: anything a
 * task was started with (driver, user, config, env, meta, resources, ports, lifecycle,
 * artifacts, templates, disk, volumes, placement preferences) forces a replacement; counts,
 * restart/reschedule policies, update strategies and kill timeouts do not.
 */
import type { Job, NetworkResource, Task, TaskGroup } from '../structs/index.js';

/** Structural equality for JSON-like values; null, undefined and empty containers are equal. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isEmpty(a) && isEmpty(b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!deepEqual(ao[k], bo[k])) return false;
  return true;
}

function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  return false;
}

/** Port labels → static value, or -1 for dynamic ports whose value does not matter. */
function portMap(n: NetworkResource): Record<string, number> {
  const m: Record<string, number> = {};
  for (const p of n.ReservedPorts ?? []) m[p.Label] = p.Value;
  for (const p of n.DynamicPorts ?? []) m[p.Label] = -1;
  return m;
}

function networksChanged(a: NetworkResource[] | null, b: NetworkResource[] | null): boolean {
  const aa = a ?? [];
  const bb = b ?? [];
  if (aa.length !== bb.length) return true;
  for (let i = 0; i < aa.length; i++) {
    const x = aa[i]!;
    const y = bb[i]!;
    if (x.MBits !== y.MBits || (x.Mode ?? '') !== (y.Mode ?? '')) return true;
    if (!deepEqual(portMap(x), portMap(y))) return true;
    if (!deepEqual(x.DNS, y.DNS)) return true;
  }
  return false;
}

function combinedMeta(job: Job, tg: TaskGroup, task: Task): Record<string, string> {
  return { ...(job.Meta ?? {}), ...(tg.Meta ?? {}), ...(task.Meta ?? {}) };
}

function taskChanged(jobA: Job, tgA: TaskGroup, a: Task, jobB: Job, tgB: TaskGroup, b: Task): boolean {
  if (a.Driver !== b.Driver || a.User !== b.User) return true;
  if (!deepEqual(a.Lifecycle, b.Lifecycle)) return true;
  if (!deepEqual(a.Config, b.Config)) return true;
  if (!deepEqual(a.Env, b.Env)) return true;
  if (!deepEqual(a.Artifacts, b.Artifacts)) return true;
  if (!deepEqual(a.Templates, b.Templates)) return true;
  if (!deepEqual(a.DispatchPayload, b.DispatchPayload)) return true;
  if (!deepEqual(a.Identity, b.Identity) || !deepEqual(a.Identities, b.Identities)) return true;
  if (!deepEqual(a.VolumeMounts ?? null, b.VolumeMounts ?? null)) return true;
  if (!deepEqual(combinedMeta(jobA, tgA, a), combinedMeta(jobB, tgB, b))) return true;
  if (!deepEqual(a.Affinities, b.Affinities)) return true;
  const ra = a.Resources;
  const rb = b.Resources;
  if (ra.CPU !== rb.CPU || ra.Cores !== rb.Cores) return true;
  if (ra.MemoryMB !== rb.MemoryMB || ra.MemoryMaxMB !== rb.MemoryMaxMB) return true;
  if (!deepEqual(ra.Devices, rb.Devices)) return true;
  return networksChanged(ra.Networks, rb.Networks);
}

/**
 * True when moving the allocations of task group `group` from jobA to jobB needs new
 * allocations. A group missing from either job counts as changed.
 */
export function tasksUpdated(jobA: Job, jobB: Job, group: string): boolean {
  if (jobA === jobB) return false;
  const a = jobA.TaskGroups.find((g) => g.Name === group);
  const b = jobB.TaskGroups.find((g) => g.Name === group);
  if (!a || !b) return true;
  if (a.Tasks.length !== b.Tasks.length) return true;
  if (!deepEqual(a.EphemeralDisk, b.EphemeralDisk)) return true;
  if (networksChanged(a.Networks, b.Networks)) return true;
  if (!deepEqual(a.Volumes, b.Volumes)) return true;
  if (!deepEqual(a.Affinities, b.Affinities) || !deepEqual(a.Spreads, b.Spreads)) return true;
  if (!deepEqual(jobA.Affinities, jobB.Affinities) || !deepEqual(jobA.Spreads, jobB.Spreads)) return true;
  for (const at of a.Tasks) {
    const bt = b.Tasks.find((t) => t.Name === at.Name);
    if (!bt) return true;
    if (taskChanged(jobA, a, at, jobB, b, bt)) return true;
  }
  return false;
}
