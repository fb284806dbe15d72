/**
 * The simulated cluster of the scheduler benchmark: nodes as a client would register them
 * (fingerprinted attributes, drivers, resources) and small service jobs sized so that
 * 1,000 jobs × 1,000 allocations fit on 5,000 nodes, as in Nomad's C1M.
 */
import { generateId, type Job, type Node } from '../../src/structs/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { newNode } from '../../src/structs/node.js';

/** What one benchmark allocation asks for: small enough that 200+ fit on a node. */
export const TASK_CPU_MHZ = 10;
export const TASK_MEMORY_MB = 16;
export const TASK_DISK_MB = 10;

/** A ready linux node with 16 cores (32,000 MHz), 32 GiB and 200 GiB disk. */
export function simulatedNode(i: number): Node {
  const id = generateId();
  const driver = {
    Attributes: null,
    Detected: true,
    Healthy: true,
    HealthDescription: 'Healthy',
    UpdateTime: '2024-01-01T00:00:00Z',
  };
  const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return newNode({
    ID: id,
    SecretID: generateId(),
    Name: `sim-${i}`,
    HTTPAddr: `${ip}:4646`,
    Attributes: {
      'kernel.name': 'linux',
      'os.name': 'ubuntu',
      'cpu.arch': 'amd64',
      'cpu.numcores': '16',
      'cpu.totalcompute': '32000',
      'unique.hostname': `sim-${i}`,
      'unique.network.ip-address': ip,
      'nomad.version': '1.7.0',
      'driver.mock_driver': '1',
    },
    NodeResources: {
      Cpu: { CpuShares: 32_000, TotalCpuCores: 16, ReservableCpuCores: [] },
      Memory: { MemoryMB: 32_768 },
      Disk: { DiskMB: 200 * 1024 },
      Networks: [{ Mode: 'host', Device: 'eth0', CIDR: `${ip}/32`, IP: ip, MBits: 1000, DNS: null, ReservedPorts: null, DynamicPorts: null }],
      Devices: null,
      MinDynamicPort: 20_000,
      MaxDynamicPort: 32_000,
    },
    ReservedResources: {
      Cpu: { CpuShares: 100 },
      Memory: { MemoryMB: 256 },
      Disk: { DiskMB: 1024 },
      Networks: { ReservedHostPorts: '22' },
    },
    NodeClass: 'sim',
    Drivers: { mock_driver: driver },
    Status: 'ready',
  });
}

/** A job "bench-<i>" of the given type with one group of `count` mock-driver tasks. */
export function benchJob(i: number, count: number, type: 'service' | 'batch'): Job {
  return canonicalizeJob({
    ID: `bench-${i}`,
    Name: `bench-${i}`,
    Type: type,
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'g',
        Count: count,
        EphemeralDisk: { SizeMB: TASK_DISK_MB },
        Tasks: [
          {
            Name: 't',
            Driver: 'mock_driver',
            Config: { run_for: '1h' },
            Resources: { CPU: TASK_CPU_MHZ, MemoryMB: TASK_MEMORY_MB },
          },
        ],
      },
    ],
  });
}
