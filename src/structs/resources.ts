/**
 * Resources asked for by tasks, offered by nodes and allocated to allocations, with Nomad's
 * field names.
 */

/** A port: static (ReservedPorts, Value set) or dynamic (DynamicPorts, Value chosen on placement). */
export interface Port {
  Label: string;
  Value: number;
  To: number;
  HostNetwork: string;
}

/** A network ask (group `network` block) or an allocated network. */
export interface NetworkResource {
  Mode: string;
  Device: string;
  CIDR: string;
  IP: string;
  Hostname?: string;
  MBits: number;
  DNS: { Servers: string[]; Searches: string[]; Options: string[] } | null;
  ReservedPorts: Port[] | null;
  DynamicPorts: Port[] | null;
  /** `cni { args = {…} }`: arguments passed to CNI plugins (CNI_ARGS) in "cni/…" modes. */
  CNI?: { Args: Record<string, string> | null } | null;
}

/**
 * `memory_max = -1` (Nomad 1.7 for raw_exec, 1.11 for every driver): the task reserves its
 * `memory` but has no hard limit (cgroup memory.max "max").
 */
export const MEMORY_MAX_UNLIMITED = -1;

/**
 * What a task asks for. CPU in MHz, memory in MiB. MemoryMaxMB 0 means "no oversubscription",
 * MEMORY_MAX_UNLIMITED no hard limit.
 */
export interface Resources {
  CPU: number;
  Cores: number;
  MemoryMB: number;
  MemoryMaxMB: number;
  DiskMB: number;
  IOPS?: number;
  /** MiB of the task's memory for its secrets dir (Nomad's `resources { secrets }`); 0 when not asked. */
  SecretsMB?: number;
  Networks: NetworkResource[] | null;
  Devices: unknown[] | null;
}

/** A port mapping allocated to an allocation. */
export interface AllocatedPortMapping {
  Label: string;
  Value: number;
  To: number;
  HostIP: string;
}

export interface AllocatedCpuResources {
  CpuShares: number;
  ReservedCores: number[] | null;
}

export interface AllocatedMemoryResources {
  MemoryMB: number;
  MemoryMaxMB: number;
}

export interface AllocatedTaskResources {
  Cpu: AllocatedCpuResources;
  Memory: AllocatedMemoryResources;
  Networks: NetworkResource[] | null;
  Devices: unknown[] | null;
}

export interface AllocatedSharedResources {
  Networks: NetworkResource[] | null;
  DiskMB: number;
  Ports: AllocatedPortMapping[] | null;
}

/** The resources an allocation holds on its node. */
export interface AllocatedResources {
  Tasks: Record<string, AllocatedTaskResources>;
  TaskLifecycles: Record<string, { Hook: string; Sidecar: boolean } | null>;
  Shared: AllocatedSharedResources;
}

/** A node's CPU: total MHz across cores. */
export interface NodeCpuResources {
  CpuShares: number;
  TotalCpuCores: number;
  ReservableCpuCores: number[] | null;
}

/** What a node offers to the scheduler. */
export interface NodeResources {
  Cpu: NodeCpuResources;
  Memory: { MemoryMB: number };
  Disk: { DiskMB: number };
  Networks: NetworkResource[] | null;
  Devices: unknown[] | null;
  MinDynamicPort: number;
  MaxDynamicPort: number;
}

/** What a node keeps for itself (not schedulable). */
export interface NodeReservedResources {
  Cpu: { CpuShares: number; ReservedCpuCores?: number[] | null };
  Memory: { MemoryMB: number };
  Disk: { DiskMB: number };
  Networks: { ReservedHostPorts: string };
}

/**
 * A node that reserves nothing, as Nomad's client registers one without a `reserved` block:
 * zeros, never null (`nomad node status -self` dereferences it unchecked).
 */
export function noReservedResources(): NodeReservedResources {
  return { Cpu: { CpuShares: 0, ReservedCpuCores: null }, Memory: { MemoryMB: 0 }, Disk: { DiskMB: 0 }, Networks: { ReservedHostPorts: '' } };
}
