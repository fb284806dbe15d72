/**
 * The node answers of the API built in one place, for the routes and the event stream alike: a
 * node as read (Nomad's `Node.Sanitize()`: its SecretID never leaves the server, it
 * authenticates the node's client) and the row of GET /v1/nodes.
 */
import type { Node, NodeListStub } from '../../structs/node.js';
import { noReservedResources, type NetworkResource, type NodeReservedResources, type Resources } from '../../structs/resources.js';
import { CARAVAN_VERSION } from '../../structs/version.js';

/** A node as the API reads it: with Nomad's pre-0.9 `Resources` and `Reserved` beside NodeResources. */
export interface NodeView extends Node {
  ReservedResources: NodeReservedResources;
  Resources: Resources;
  Reserved: Resources;
  CgroupParent: string;
  CSIControllerPlugins: Record<string, never>;
  CSINodePlugins: Record<string, never>;
}

function legacy(cpu: number, memoryMB: number, diskMB: number, networks: NetworkResource[] | null): Resources {
  return { CPU: cpu, Cores: 0, MemoryMB: memoryMB, MemoryMaxMB: 0, DiskMB: diskMB, IOPS: 0, SecretsMB: 0, Networks: networks, Devices: null };
}

/**
 * A node as the API answers it: a copy with the SecretID blanked (the state's object is
 * untouched), and the deprecated `Resources`/`Reserved` Nomad's clients still send and its CLI
 * still reads (`nomad node status <id>` dereferences `node.Resources.CPU`), derived here.
 *
 * Nomad's client fills every pointer and map of its node before registering (client.setupNode),
 * so Nomad never answers them null: ReservedResources is zeros where nothing is reserved (`nomad
 * node status -self` and `-verbose` dereference it), Links and the CSI plugin maps are empty. A
 * node registered without them (an older client's) gets the same here.
 */
export function nodeView(node: Node): NodeView {
  const r = node.NodeResources;
  const reserved = node.ReservedResources ?? noReservedResources();
  return {
    ...node,
    SecretID: '',
    ReservedResources: reserved,
    Links: node.Links ?? {},
    HostVolumes: node.HostVolumes ?? {},
    CgroupParent: '',
    CSIControllerPlugins: {},
    CSINodePlugins: {},
    Resources: legacy(r?.Cpu?.CpuShares ?? 0, r?.Memory?.MemoryMB ?? 0, r?.Disk?.DiskMB ?? 0, r?.Networks ?? null),
    Reserved: legacy(reserved.Cpu?.CpuShares ?? 0, reserved.Memory?.MemoryMB ?? 0, reserved.Disk?.DiskMB ?? 0, null),
  };
}

/** The host part of a node's HTTP address ("10.0.0.5:4646" → "10.0.0.5"). */
export function nodeAddress(node: Node): string {
  const addr = node.HTTPAddr ?? '';
  if (addr.startsWith('[')) return addr.slice(1, addr.indexOf(']'));
  const colon = addr.lastIndexOf(':');
  return colon > 0 ? addr.slice(0, colon) : addr;
}

/**
 * The row of GET /v1/nodes; attributes only when `?os=true` asked for them, NodeResources and
 * ReservedResources only with `?resources=true` (as Nomad).
 */
export function nodeListStub(node: Node, withOs = false, withResources = false): NodeListStub {
  const stub: NodeListStub = {
    Address: nodeAddress(node),
    ID: node.ID,
    Datacenter: node.Datacenter,
    Name: node.Name,
    NodeClass: node.NodeClass,
    NodePool: node.NodePool,
    Version: node.Attributes?.['nomad.version'] ?? CARAVAN_VERSION,
    Drain: node.Drain,
    SchedulingEligibility: node.SchedulingEligibility,
    Status: node.Status,
    StatusDescription: node.StatusDescription,
    Drivers: node.Drivers,
    LastDrain: node.LastDrain ?? null,
    CreateIndex: node.CreateIndex,
    ModifyIndex: node.ModifyIndex,
  };
  if (withOs) {
    const os = node.Attributes?.['os.name'];
    stub.Attributes = os === undefined ? {} : { 'os.name': os };
  }
  if (withResources) {
    stub.NodeResources = node.NodeResources;
    stub.ReservedResources = node.ReservedResources ?? noReservedResources();
  }
  return stub;
}
