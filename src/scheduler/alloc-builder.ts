/**
 * Builds the allocation objects a plan carries: new placements, stopped copies and in-place
 * updates. New allocations share the Job object (never a deep copy).
 */
import {
  NANOS_PER_MS,
  type AllocMetric,
  type AllocatedResources,
  type Allocation,
  type Evaluation,
  type Job,
  type Node,
  type RescheduleTracker,
  type TaskGroup,
} from '../structs/index.js';
import type { GroupAsk } from '../structs/group-ask.js';
import type { PortAssignment } from './port-assignment.js';
import { GO_ZERO_TIME } from '../structs/go-time.js';

/** Everything needed to build a new allocation. */
export interface NewAllocInput {
  id: string;
  evaluation: Evaluation;
  job: Job;
  group: TaskGroup;
  name: string;
  node: Node;
  ask: GroupAsk;
  ports: PortAssignment;
  metric: AllocMetric;
  nowMs: number;
  previous: Allocation | null;
  tracker: RescheduleTracker | null;
  /** The deployment the allocation belongs to, if any. */
  deploymentId?: string;
  /** True for a deployment's canary. */
  canary?: boolean;
  /** The operator's memory oversubscription: without it, tasks get no `memory_max` (Nomad's binpack iterator). */
  memoryOversubscription?: boolean;
}

// Without ports, every allocation of a group holds the same resources: they share one object
// (allocations are immutable), which saves memory and lets the log write it once per plan.
const portlessResources = [new WeakMap<TaskGroup, AllocatedResources>(), new WeakMap<TaskGroup, AllocatedResources>()];

function allocatedResources(group: TaskGroup, ask: GroupAsk, ports: PortAssignment, memoryMax: boolean): AllocatedResources {
  const portless = ports.groupNetworks.length === 0 && ports.mappings.length === 0 && ports.taskNetworks.size === 0;
  if (!portless) return buildResources(group, ask, ports, memoryMax);
  const cache = portlessResources[memoryMax ? 1 : 0]!;
  let ar = cache.get(group);
  if (!ar) {
    ar = buildResources(group, ask, ports, memoryMax);
    cache.set(group, ar);
  }
  return ar;
}

function buildResources(group: TaskGroup, ask: GroupAsk, ports: PortAssignment, memoryMax: boolean): AllocatedResources {
  const ar: AllocatedResources = {
    Tasks: {},
    TaskLifecycles: {},
    Shared: {
      Networks: ports.groupNetworks.length > 0 ? ports.groupNetworks : null,
      DiskMB: ask.disk,
      Ports: ports.mappings.length > 0 ? ports.mappings : null,
    },
  };
  for (const t of group.Tasks) {
    ar.Tasks[t.Name] = {
      Cpu: { CpuShares: t.Resources.CPU, ReservedCores: null },
      Memory: { MemoryMB: t.Resources.MemoryMB, MemoryMaxMB: memoryMax ? t.Resources.MemoryMaxMB : 0 },
      Networks: ports.taskNetworks.get(t.Name) ?? null,
      Devices: null,
    };
    ar.TaskLifecycles[t.Name] = t.Lifecycle ? { Hook: t.Lifecycle.Hook, Sidecar: t.Lifecycle.Sidecar } : null;
  }
  return ar;
}

/**
 * The desired transition of every new allocation: one frozen object, not one per allocation
 * (the state keeps a million of them; the log codec writes a shared object once per plan).
 */
const NO_TRANSITION: Allocation['DesiredTransition'] = Object.freeze({});

/** A new pending allocation wanted running. */
export function buildNewAlloc(i: NewAllocInput): Allocation {
  const now = i.nowMs * NANOS_PER_MS;
  return {
    ID: i.id,
    Namespace: i.job.Namespace,
    EvalID: i.evaluation.ID,
    Name: i.name,
    NodeID: i.node.ID,
    NodeName: i.node.Name,
    JobID: i.job.ID,
    Job: i.job,
    TaskGroup: i.group.Name,
    AllocatedResources: allocatedResources(i.group, i.ask, i.ports, i.memoryOversubscription ?? false),
    Metrics: i.metric,
    DesiredStatus: 'run',
    DesiredDescription: '',
    DesiredTransition: NO_TRANSITION,
    ClientStatus: 'pending',
    ClientDescription: '',
    TaskStates: null,
    DeploymentID: i.deploymentId ?? '',
    DeploymentStatus: i.canary ? { Healthy: null, Timestamp: GO_ZERO_TIME, Canary: true, ModifyIndex: 0 } : null,
    FollowupEvalID: '',
    PreviousAllocation: i.previous?.ID ?? '',
    NextAllocation: '',
    RescheduleTracker: i.tracker,
    PreemptedAllocations: null,
    PreemptedByAllocation: '',
    CreateIndex: 0,
    ModifyIndex: 0,
    AllocModifyIndex: 0,
    CreateTime: now,
    ModifyTime: now,
  };
}

/** A copy of an allocation asked to stop, optionally marked lost. */
export function buildStoppedAlloc(a: Allocation, description: string, clientStatus: 'lost' | null, nowMs: number): Allocation {
  return {
    ...a,
    DesiredStatus: 'stop',
    DesiredDescription: description,
    ClientStatus: clientStatus ?? a.ClientStatus,
    ClientDescription: clientStatus === 'lost' ? 'alloc is lost since its node is down' : a.ClientDescription,
    ModifyTime: nowMs * NANOS_PER_MS,
  };
}

/** A copy of an allocation moved to the new job version without a restart. */
export function buildInPlaceAlloc(a: Allocation, job: Job, evaluation: Evaluation, nowMs: number): Allocation {
  return { ...a, Job: job, EvalID: evaluation.ID, ModifyTime: nowMs * NANOS_PER_MS };
}
