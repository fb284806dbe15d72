/**
 * What one simulated node is: its identity, name, datacenter, node pool, rack (meta) and
 * resources, chosen from its index so that N nodes spread evenly — three datacenters, a quarter
 * of the nodes in the "edge" pool, 40 nodes a rack, and three machine sizes. Each node gets
 * its own (unroutable) 10.x address, so ports allocated on different nodes never collide.
 */
import type { HostFingerprint } from '../../src/client/node/fingerprint.js';
import type { NodeIdentity } from '../../src/client/node/node-identity.js';
import { generateId } from '../../src/structs/ids.js';
import { CARAVAN_VERSION, NOMAD_COMPAT_VERSION } from '../../src/structs/version.js';

/** The datacenters the nodes spread over. */
export const SIM_DATACENTERS = ['dc1', 'dc2', 'dc3'] as const;
/** The node pools: "default", and "edge" for every fourth node. */
export const SIM_EDGE_POOL = 'edge';
/** Nodes per rack (meta.rack). */
const NODES_PER_RACK = 40;
/** Machine sizes: cores and memory. */
const SIZES = [
  { cores: 4, memoryMB: 16_384 },
  { cores: 8, memoryMB: 32_768 },
  { cores: 16, memoryMB: 65_536 },
] as const;
const MHZ = 2500;
const DISK_MB = 100_000;

/** One simulated node's configuration. */
export interface SimulatedNode {
  identity: NodeIdentity;
  name: string;
  datacenter: string;
  nodePool: string;
  meta: Record<string, string>;
  host: HostFingerprint;
  /** Advertised "ip:port" (never served: the simulator answers no client API). */
  httpAddr: string;
}

/** The node of index `i` (0-based). */
export function simulatedNode(i: number): SimulatedNode {
  const size = SIZES[i % SIZES.length]!;
  const datacenter = SIM_DATACENTERS[i % SIM_DATACENTERS.length]!;
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  const totalCompute = size.cores * MHZ;
  const name = `sim-${String(i).padStart(5, '0')}`;
  const attributes: Record<string, string> = {
    'cpu.numcores': String(size.cores),
    'cpu.frequency': String(MHZ),
    'cpu.totalcompute': String(totalCompute),
    'cpu.arch': 'amd64',
    'cpu.modelname': 'nodesim',
    'memory.totalbytes': String(size.memoryMB * 1024 * 1024),
    'kernel.name': 'linux',
    'kernel.version': '6.1.0',
    'kernel.arch': 'x86_64',
    'os.name': 'debian',
    'os.version': '12',
    'unique.hostname': name,
    'unique.storage.volume': '/nodesim',
    'unique.storage.bytesfree': String(DISK_MB * 1024 * 1024),
    'unique.storage.bytestotal': String(DISK_MB * 1024 * 1024),
    'nomad.version': NOMAD_COMPAT_VERSION,
    'nomad.revision': 'caravan',
    'caravan.version': CARAVAN_VERSION,
  };
  return {
    identity: { id: generateId(), secretId: generateId() },
    name,
    datacenter,
    nodePool: i % 4 === 3 ? SIM_EDGE_POOL : 'default',
    meta: { rack: `r${Math.floor(i / NODES_PER_RACK)}`, nodesim: 'true' },
    host: {
      attributes,
      resources: {
        Cpu: { CpuShares: totalCompute, TotalCpuCores: size.cores, ReservableCpuCores: Array.from({ length: size.cores }, (_, c) => c) },
        Memory: { MemoryMB: size.memoryMB },
        Disk: { DiskMB: DISK_MB },
        Networks: null,
        Devices: null,
        MinDynamicPort: 20000,
        MaxDynamicPort: 32000,
      },
    },
    httpAddr: `${ip}:4646`,
  };
}
