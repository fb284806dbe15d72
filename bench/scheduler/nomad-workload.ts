/**
 * The cluster and job of Nomad's `scheduler/benchmarks` BenchmarkServiceScheduler, shape for
 * shape: nodes alternating between datacenters dc-1 and dc-2 with `meta.rack = r<i % racks>`,
 * 14,000 MHz (4 cores of 3,500 MHz), 32,000 MB and 100 GiB each, Nomad's mock-node reservation
 * (100 MHz, 256 MB, 4 GiB, port 22); the job is Nomad's mock service job (group "web", one
 * `exec` task, 150 MB ephemeral disk) asking 6,000 MHz and 6,000 MB, no networks or services,
 * constrained to the first half of the racks with `${meta.rack} set_contains_any`, optionally
 * with `spread { attribute = "${meta.rack}" }`.
 */
import { generateId, type Job, type Node } from '../../src/structs/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { newNode } from '../../src/structs/node.js';

export const NODE_CPU_MHZ = 14_000;
export const NODE_MEMORY_MB = 32_000;
export const NODE_DISK_MB = 100 * 1024;
export const TASK_CPU_MHZ = 6_000;
export const TASK_MEMORY_MB = 6_000;
export const GROUP_DISK_MB = 150;
export const RACK_ATTRIBUTE = '${meta.rack}';

/** The rack of the i-th node. */
export function rackOf(i: number, racks: number): string {
  return `r${i % racks}`;
}

/** The racks the job may use: the first ⌊racks/2⌋, as Nomad's benchmark. */
export function eligibleRacks(racks: number): string[] {
  return Array.from({ length: Math.floor(racks / 2) }, (_, i) => `r${i}`);
}

/** The i-th node of a cluster with `racks` racks, ready and eligible. */
export function workloadNode(i: number, racks: number): Node {
  const healthy = { Attributes: null, Detected: true, Healthy: true, HealthDescription: 'Healthy', UpdateTime: '2024-01-01T00:00:00Z' };
  return newNode({
    ID: generateId(),
    SecretID: generateId(),
    Name: 'foobar',
    Datacenter: i % 2 === 0 ? 'dc-1' : 'dc-2',
    Attributes: {
      'kernel.name': 'linux',
      arch: 'x86',
      'nomad.version': '0.5.0',
      'driver.exec': '1',
      'driver.mock_driver': '1',
      'consul.version': '1.11.4',
      'cpu.numcores': '4',
      'cpu.totalcompute': String(NODE_CPU_MHZ),
      'unique.advertise.address': `192.168.${i % 10}.${i % 120}`,
    },
    NodeResources: {
      Cpu: { CpuShares: NODE_CPU_MHZ, TotalCpuCores: 4, ReservableCpuCores: [] },
      Memory: { MemoryMB: NODE_MEMORY_MB },
      Disk: { DiskMB: NODE_DISK_MB },
      Networks: [{ Mode: 'host', Device: 'eth0', CIDR: '192.168.0.100/32', IP: '192.168.0.100', MBits: 1000, DNS: null, ReservedPorts: null, DynamicPorts: null }],
      Devices: null,
      MinDynamicPort: 20_000,
      MaxDynamicPort: 32_000,
    },
    ReservedResources: {
      Cpu: { CpuShares: 100 },
      Memory: { MemoryMB: 256 },
      Disk: { DiskMB: 4 * 1024 },
      Networks: { ReservedHostPorts: '22' },
    },
    Links: { consul: 'foobar.dc1' },
    Meta: { rack: rackOf(i, racks) },
    NodeClass: 'linux-medium-pci',
    Drivers: { exec: healthy, mock_driver: { ...healthy } },
    Status: 'ready',
  });
}

/** Nomad's mock service job resized for the benchmark. */
export function workloadJob(count: number, racks: number, withSpread: boolean): Job {
  return canonicalizeJob({
    ID: `mock-service-${generateId()}`,
    Name: 'my-job',
    Type: 'service',
    Priority: 50,
    Datacenters: ['dc-1', 'dc-2'],
    Constraints: [{ LTarget: RACK_ATTRIBUTE, RTarget: eligibleRacks(racks).join(','), Operand: 'set_contains_any' }],
    Spreads: withSpread ? [{ Attribute: RACK_ATTRIBUTE, Weight: 0, SpreadTarget: null }] : null,
    Meta: { owner: 'armon' },
    TaskGroups: [
      {
        Name: 'web',
        Count: count,
        EphemeralDisk: { SizeMB: GROUP_DISK_MB },
        RestartPolicy: { Attempts: 3, Interval: 10 * 60e9, Delay: 60e9, Mode: 'delay' },
        ReschedulePolicy: { Attempts: 2, Interval: 10 * 60e9, Delay: 5e9, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false },
        Tasks: [
          {
            Name: 'web',
            Driver: 'exec',
            Config: { command: '/bin/date' },
            Env: { FOO: 'bar' },
            Resources: { CPU: TASK_CPU_MHZ, MemoryMB: TASK_MEMORY_MB },
          },
        ],
      },
    ],
  });
}
