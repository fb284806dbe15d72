/**
 * Port assignment on a node: static ports must be free, dynamic ports are drawn from the
 * node's MinDynamicPort..MaxDynamicPort (default 20000-32000) avoiding used ones. The draws
 * use the evaluation's random source, so a given seed gives the same ports.
 */
import type { AllocatedPortMapping, NetworkResource, Node, Port } from '../structs/index.js';
import type { GroupAsk } from '../structs/group-ask.js';
import { portInUse, type ProposedNodeUsage } from './node-usage.js';

/** Default dynamic port range, as Nomad's. */
export const DEFAULT_MIN_DYNAMIC_PORT = 20000;
export const DEFAULT_MAX_DYNAMIC_PORT = 32000;

/** DimensionExhausted keys for port failures. */
export const PortDimension = {
  ReservedCollision: 'network: reserved port collision',
  DynamicExhausted: 'network: dynamic port selection failed',
} as const;
export type PortDimension = (typeof PortDimension)[keyof typeof PortDimension];

/** The networks with their ports filled in, and the flat list of ports taken. */
export interface PortAssignment {
  groupNetworks: NetworkResource[];
  taskNetworks: Map<string, NetworkResource[]>;
  mappings: AllocatedPortMapping[];
  ports: number[];
}

const RANDOM_TRIES = 20;

// Shared answer for groups that ask for no ports; callers only read it.
export const NO_PORTS: PortAssignment = Object.freeze({ groupNetworks: [], taskNetworks: new Map(), mappings: [], ports: [] });

/** Assigns every asked port on the node, or names the dimension that could not be met. */
export function assignPorts(node: Node, usage: ProposedNodeUsage, ask: GroupAsk, random: () => number): PortAssignment | PortDimension {
  if (ask.networks.length === 0) return NO_PORTS;
  const out: PortAssignment = { groupNetworks: [], taskNetworks: new Map(), mappings: [], ports: [] };
  const taken = new Set<number>();
  const used = (p: number) => taken.has(p) || portInUse(node, usage, p);
  const ip = node.NodeResources.Networks?.[0]?.IP ?? '';
  const device = node.NodeResources.Networks?.[0]?.Device ?? '';
  const min = node.NodeResources.MinDynamicPort > 0 ? node.NodeResources.MinDynamicPort : DEFAULT_MIN_DYNAMIC_PORT;
  const max = node.NodeResources.MaxDynamicPort > 0 ? node.NodeResources.MaxDynamicPort : DEFAULT_MAX_DYNAMIC_PORT;

  for (const { owner, network } of ask.networks) {
    const reserved: Port[] = [];
    for (const p of network.ReservedPorts ?? []) {
      if (used(p.Value)) return PortDimension.ReservedCollision;
      taken.add(p.Value);
      reserved.push({ ...p });
    }
    const dynamic: Port[] = [];
    for (const p of network.DynamicPorts ?? []) {
      const v = pickDynamic(min, max, used, random);
      if (v < 0) return PortDimension.DynamicExhausted;
      taken.add(v);
      dynamic.push({ ...p, Value: v, To: p.To === 0 ? 0 : p.To });
    }
    const assigned: NetworkResource = {
      ...network,
      IP: ip,
      Device: network.Device || device,
      ReservedPorts: reserved.length > 0 ? reserved : null,
      DynamicPorts: dynamic.length > 0 ? dynamic : null,
    };
    for (const p of [...reserved, ...dynamic]) {
      out.mappings.push({ Label: p.Label, Value: p.Value, To: p.To, HostIP: ip });
      out.ports.push(p.Value);
    }
    if (owner === null) out.groupNetworks.push(assigned);
    else {
      const list = out.taskNetworks.get(owner) ?? [];
      list.push(assigned);
      out.taskNetworks.set(owner, list);
    }
  }
  return out;
}

function pickDynamic(min: number, max: number, used: (p: number) => boolean, random: () => number): number {
  const span = max - min + 1;
  if (span <= 0) return -1;
  for (let i = 0; i < RANDOM_TRIES; i++) {
    const p = min + Math.floor(random() * span);
    if (!used(p)) return p;
  }
  // Crowded range: scan from a random start so the answer still depends only on the seed.
  const start = Math.floor(random() * span);
  for (let i = 0; i < span; i++) {
    const p = min + ((start + i) % span);
    if (!used(p)) return p;
  }
  return -1;
}
