/**
 * What a task group asks of a node (CPU, memory, disk, ports), computed once per group, and
 * the resources an existing allocation holds, read back from its AllocatedResources.
 */
import type { Allocation } from './alloc.js';
import type { TaskGroup } from './job.js';
import type { NetworkResource } from './resources.js';

/** A group's total ask. CPU in MHz, memory and disk in MB. */
export interface GroupAsk {
  cpu: number;
  memory: number;
  disk: number;
  /** The networks asked for (group-level first, then per task), with ports unassigned. */
  networks: { owner: string | null; network: NetworkResource }[];
}

/** Sums the group's tasks and adds its ephemeral disk and networks. */
export function groupAsk(group: TaskGroup): GroupAsk {
  let cpu = 0;
  let memory = 0;
  const networks: GroupAsk['networks'] = [];
  for (const n of group.Networks ?? []) networks.push({ owner: null, network: n });
  for (const t of group.Tasks) {
    cpu += t.Resources.CPU;
    memory += t.Resources.MemoryMB;
    for (const n of t.Resources.Networks ?? []) networks.push({ owner: t.Name, network: n });
  }
  return { cpu, memory, disk: group.EphemeralDisk?.SizeMB ?? 0, networks };
}

/** The resources an allocation holds on its node. */
export interface HeldResources {
  cpu: number;
  memory: number;
  disk: number;
  ports: number[];
}

function networkPorts(nets: NetworkResource[] | null, out: number[]): void {
  for (const n of nets ?? []) {
    for (const p of n.ReservedPorts ?? []) if (p.Value > 0) out.push(p.Value);
    for (const p of n.DynamicPorts ?? []) if (p.Value > 0) out.push(p.Value);
  }
}

/** Reads an allocation's held resources; falls back to its job's ask when it has none recorded. */
export function heldResources(a: Allocation): HeldResources {
  const ar = a.AllocatedResources;
  if (!ar) {
    const g = a.Job?.TaskGroups.find((x) => x.Name === a.TaskGroup);
    if (!g) return { cpu: 0, memory: 0, disk: 0, ports: [] };
    const ask = groupAsk(g);
    const ports: number[] = [];
    for (const n of ask.networks) for (const p of n.network.ReservedPorts ?? []) ports.push(p.Value);
    return { cpu: ask.cpu, memory: ask.memory, disk: ask.disk, ports };
  }
  let cpu = 0;
  let memory = 0;
  const ports: number[] = [];
  for (const t of Object.values(ar.Tasks)) {
    cpu += t.Cpu.CpuShares;
    memory += t.Memory.MemoryMB;
    networkPorts(t.Networks, ports);
  }
  if (ar.Shared.Ports && ar.Shared.Ports.length > 0) {
    for (const p of ar.Shared.Ports) if (p.Value > 0) ports.push(p.Value);
  } else {
    networkPorts(ar.Shared.Networks, ports);
  }
  return { cpu, memory, disk: ar.Shared.DiskMB, ports };
}
