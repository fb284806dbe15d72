/**
 * Test factories: fully populated, valid Nomad API objects for tests across the project.
 * Every factory returns a fresh object (no shared mutable state between calls); overrides are
 * shallow and replace top-level fields.
 */
import {
  generateId,
  type AllocMetric,
  type Allocation,
  type Evaluation,
  type Job,
  type Node,
  type Task,
  type TaskGroup,
} from '../../src/structs/index.js';
import { newEvaluation } from '../../src/server/new-eval.js';
import { newAllocMetric } from '../../src/scheduler/alloc-metrics.js';
import { newNode } from '../../src/structs/node.js';

const SECOND = 1_000_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** A task "web" run by the mock driver with 500 MHz and 256 MB. */
export function mockTask(overrides: Partial<Task> = {}): Task {
  return {
    Name: 'web',
    Driver: 'mock_driver',
    User: '',
    Lifecycle: null,
    Config: { run_for: '10s' },
    Constraints: null,
    Affinities: null,
    Env: { FOO: 'bar' },
    Services: null,
    Resources: {
      CPU: 500,
      Cores: 0,
      MemoryMB: 256,
      MemoryMaxMB: 0,
      DiskMB: 0,
      Networks: null,
      Devices: null,
    },
    RestartPolicy: null,
    Meta: null,
    KillTimeout: 5 * SECOND,
    LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10 },
    Artifacts: null,
    Templates: null,
    DispatchPayload: null,
    Leader: false,
    ShutdownDelay: 0,
    KillSignal: '',
    Kind: '',
    ...overrides,
  };
}

/** A task group "web" with count 10 and one mockTask, service-style policies. */
export function mockTaskGroup(overrides: Partial<TaskGroup> = {}): TaskGroup {
  return {
    Name: 'web',
    Count: 10,
    Constraints: null,
    Affinities: null,
    Spreads: null,
    Tasks: [mockTask()],
    RestartPolicy: { Attempts: 2, Interval: 30 * MINUTE, Delay: 15 * SECOND, Mode: 'fail' },
    ReschedulePolicy: {
      Attempts: 0,
      Interval: 0,
      Delay: 30 * SECOND,
      DelayFunction: 'exponential',
      MaxDelay: HOUR,
      Unlimited: true,
    },
    EphemeralDisk: { Sticky: false, Migrate: false, SizeMB: 150 },
    Update: null,
    Migrate: { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: 10 * SECOND, HealthyDeadline: 5 * MINUTE },
    Networks: null,
    Meta: null,
    Services: null,
    ShutdownDelay: null,
    StopAfterClientDisconnect: null,
    MaxClientDisconnect: null,
    Volumes: null,
    ...overrides,
  };
}

/** A service job "web" in dc1 with one group "web" of count 10 and a kernel.name = linux constraint. */
export function mockJob(overrides: Partial<Job> = {}): Job {
  return {
    Region: 'global',
    Namespace: 'default',
    ID: 'web',
    Name: 'web',
    Type: 'service',
    Priority: 50,
    AllAtOnce: false,
    Datacenters: ['dc1'],
    NodePool: 'default',
    Constraints: [{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }],
    Affinities: null,
    Spreads: null,
    TaskGroups: [mockTaskGroup()],
    Update: null,
    Periodic: null,
    ParameterizedJob: null,
    Dispatched: false,
    Payload: null,
    Meta: { owner: 'caravan' },
    Stop: false,
    ParentID: '',
    Status: 'pending',
    StatusDescription: '',
    Stable: false,
    Version: 0,
    SubmitTime: 1_700_000_000_000 * 1_000_000,
    CreateIndex: 42,
    ModifyIndex: 99,
    JobModifyIndex: 99,
    ...overrides,
  };
}

/** A batch job "batch" with one group "web" of count 10 and batch reschedule/restart policies. */
export function mockBatchJob(overrides: Partial<Job> = {}): Job {
  return mockJob({
    ID: 'batch',
    Name: 'batch',
    Type: 'batch',
    TaskGroups: [
      mockTaskGroup({
        RestartPolicy: { Attempts: 3, Interval: 24 * HOUR, Delay: 15 * SECOND, Mode: 'fail' },
        ReschedulePolicy: {
          Attempts: 1,
          Interval: 24 * HOUR,
          Delay: 5 * SECOND,
          DelayFunction: 'constant',
          MaxDelay: 0,
          Unlimited: false,
        },
      }),
    ],
    ...overrides,
  });
}

/** A system job "system" with one group "web" of count 1 and no reschedule policy. */
export function mockSystemJob(overrides: Partial<Job> = {}): Job {
  return mockJob({
    ID: 'system',
    Name: 'system',
    Type: 'system',
    Priority: 100,
    TaskGroups: [mockTaskGroup({ Count: 1, ReschedulePolicy: null })],
    ...overrides,
  });
}

/** A ready, eligible linux node in dc1 with 4000 MHz, 8192 MB, 100 GB disk and healthy drivers. */
export function mockNode(overrides: Partial<Node> = {}): Node {
  const id = overrides.ID ?? generateId();
  const driver = () => ({
    Attributes: null,
    Detected: true,
    Healthy: true,
    HealthDescription: 'healthy',
    UpdateTime: '2023-11-14T22:13:20Z',
  });
  return newNode({
    ID: id,
    SecretID: generateId(),
    Name: `node-${id.slice(0, 8)}`,
    HTTPAddr: '127.0.0.1:4646',
    Attributes: {
      'kernel.name': 'linux',
      'os.name': 'ubuntu',
      'os.version': '22.04',
      'arch': 'x86',
      'cpu.arch': 'amd64',
      'cpu.numcores': '4',
      'cpu.frequency': '1000',
      'cpu.totalcompute': '4000',
      'memory.totalbytes': String(8192 * 1024 * 1024),
      'unique.hostname': `host-${id.slice(0, 8)}`,
      'unique.network.ip-address': '192.168.0.100',
      'nomad.version': '1.7.0',
      'driver.exec': '1',
      'driver.raw_exec': '1',
      'driver.mock_driver': '1',
    },
    NodeResources: {
      Cpu: { CpuShares: 4000, TotalCpuCores: 4, ReservableCpuCores: [0, 1, 2, 3] },
      Memory: { MemoryMB: 8192 },
      Disk: { DiskMB: 100 * 1024 },
      Networks: [
        {
          Mode: 'host',
          Device: 'eth0',
          CIDR: '192.168.0.100/32',
          IP: '192.168.0.100',
          MBits: 1000,
          DNS: null,
          ReservedPorts: null,
          DynamicPorts: null,
        },
      ],
      Devices: null,
      MinDynamicPort: 20000,
      MaxDynamicPort: 32000,
    },
    ReservedResources: {
      Cpu: { CpuShares: 100 },
      Memory: { MemoryMB: 256 },
      Disk: { DiskMB: 4 * 1024 },
      Networks: { ReservedHostPorts: '22' },
    },
    Meta: { pci_dss: 'true', database: 'mysql', version: '5.6' },
    NodeClass: 'linux-medium-pci',
    Drivers: { exec: driver(), raw_exec: driver(), mock_driver: driver() },
    Status: 'ready',
    StatusUpdatedAt: 1_700_000_000,
    CreateIndex: 10,
    ModifyIndex: 10,
    ...overrides,
  });
}

/** An empty AllocMetric, as the scheduler starts one. */
export function mockAllocMetric(overrides: Partial<AllocMetric> = {}): AllocMetric {
  return { ...newAllocMetric(), ...overrides };
}

/**
 * A running allocation of the job's first task group at index 0 on the node, with resources
 * matching the group's tasks. The alloc references the job object (not a copy).
 */
export function mockAlloc(job: Job, node: Node, overrides: Partial<Allocation> = {}): Allocation {
  const tg = job.TaskGroups[0]!;
  const tasks: Allocation['AllocatedResources'] = {
    Tasks: {},
    TaskLifecycles: {},
    Shared: { Networks: null, DiskMB: tg.EphemeralDisk?.SizeMB ?? 0, Ports: null },
  };
  for (const t of tg.Tasks) {
    tasks.Tasks[t.Name] = {
      Cpu: { CpuShares: t.Resources.CPU, ReservedCores: null },
      Memory: { MemoryMB: t.Resources.MemoryMB, MemoryMaxMB: t.Resources.MemoryMaxMB },
      Networks: null,
      Devices: null,
    };
    tasks.TaskLifecycles[t.Name] = t.Lifecycle ? { Hook: t.Lifecycle.Hook, Sidecar: t.Lifecycle.Sidecar } : null;
  }
  return {
    ID: generateId(),
    Namespace: job.Namespace,
    EvalID: generateId(),
    Name: `${job.ID}.${tg.Name}[0]`,
    NodeID: node.ID,
    NodeName: node.Name,
    JobID: job.ID,
    Job: job,
    TaskGroup: tg.Name,
    AllocatedResources: tasks,
    Metrics: mockAllocMetric(),
    DesiredStatus: 'run',
    DesiredDescription: '',
    DesiredTransition: {},
    ClientStatus: 'running',
    ClientDescription: '',
    TaskStates: null,
    DeploymentID: '',
    DeploymentStatus: null,
    FollowupEvalID: '',
    PreviousAllocation: '',
    NextAllocation: '',
    RescheduleTracker: null,
    PreemptedAllocations: null,
    PreemptedByAllocation: '',
    CreateIndex: 100,
    ModifyIndex: 100,
    AllocModifyIndex: 100,
    CreateTime: 1_700_000_000_000 * 1_000_000,
    ModifyTime: 1_700_000_000_000 * 1_000_000,
    ...overrides,
  };
}

/** A pending job-register evaluation for the job, built by the server's own constructor. */
export function mockEval(job: Job, overrides: Partial<Evaluation> = {}): Evaluation {
  return newEvaluation(job, 'job-register', 1_700_000_000_000 * 1_000_000, { CreateIndex: 100, ModifyIndex: 100, ...overrides });
}
