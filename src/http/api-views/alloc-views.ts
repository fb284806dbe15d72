/**
 * The allocation answers of the API built in one place: an allocation as GET
 * /v1/allocation/:id and GET /v1/node/:id/allocations send it, and as the event stream sends it.
 *
 * Nomad still fills the pre-0.9 resource fields beside AllocatedResources — `TaskResources`
 * (per task), `SharedResources` (the group's disk and networks) and `Resources` (their sum,
 * computed by its FSM) — and its own CLI reads them (`nomad node status <id>` sums
 * `alloc.Resources.CPU` and dereferences it unchecked). They are derived here from
 * AllocatedResources, the one stored form, so the state never holds two copies.
 */
import { allocStub, type AllocListStub, type Allocation, type TaskState } from '../../structs/alloc.js';
import { goTime } from '../../structs/go-time.js';
import type { AllocatedResources, NetworkResource, Resources } from '../../structs/resources.js';

/** An allocation with Nomad's derived resource fields. */
export interface AllocView extends Allocation {
  Resources: Resources | null;
  TaskResources: Record<string, Resources> | null;
  SharedResources: Resources | null;
}

function emptyResources(): Resources {
  return { CPU: 0, Cores: 0, MemoryMB: 0, MemoryMaxMB: 0, DiskMB: 0, IOPS: 0, SecretsMB: 0, Networks: null, Devices: null };
}

function withNetworks(a: NetworkResource[] | null, b: NetworkResource[] | null): NetworkResource[] | null {
  const all = [...(a ?? []), ...(b ?? [])];
  return all.length > 0 ? all : null;
}

/** Nomad's TaskResources, SharedResources and Resources of AllocatedResources. */
export function legacyResources(allocated: AllocatedResources | null): Pick<AllocView, 'Resources' | 'TaskResources' | 'SharedResources'> {
  if (!allocated) return { Resources: null, TaskResources: null, SharedResources: null };
  const tasks: Record<string, Resources> = {};
  const total = emptyResources();
  for (const [name, t] of Object.entries(allocated.Tasks ?? {})) {
    const r: Resources = {
      ...emptyResources(),
      CPU: t.Cpu?.CpuShares ?? 0,
      Cores: t.Cpu?.ReservedCores?.length ?? 0,
      MemoryMB: t.Memory?.MemoryMB ?? 0,
      MemoryMaxMB: t.Memory?.MemoryMaxMB ?? 0,
      Networks: t.Networks && t.Networks.length > 0 ? t.Networks : null,
      Devices: t.Devices && t.Devices.length > 0 ? t.Devices : null,
    };
    tasks[name] = r;
    total.CPU += r.CPU;
    total.Cores += r.Cores;
    total.MemoryMB += r.MemoryMB;
    total.MemoryMaxMB += r.MemoryMaxMB;
    total.Networks = withNetworks(total.Networks, r.Networks);
  }
  const shared: Resources = { ...emptyResources(), DiskMB: allocated.Shared?.DiskMB ?? 0, Networks: withNetworks(allocated.Shared?.Networks ?? null, null) };
  total.DiskMB += shared.DiskMB;
  total.Networks = withNetworks(total.Networks, shared.Networks);
  return { Resources: total, TaskResources: tasks, SharedResources: shared };
}

/**
 * Task states as Nomad writes them: StartedAt, FinishedAt and LastRestart are Go time.Time
 * values, the zero time when not set (the state keeps null); never null, never "".
 */
export function taskStatesView(states: Record<string, TaskState> | null): Record<string, TaskState> | null {
  if (!states) return states;
  const out: Record<string, TaskState> = {};
  for (const [task, st] of Object.entries(states)) {
    out[task] = { ...st, StartedAt: goTime(st.StartedAt), FinishedAt: goTime(st.FinishedAt), LastRestart: goTime(st.LastRestart) };
  }
  return out;
}

/** An allocation as the API reads it: the stored object with Nomad's derived resource fields. */
export function allocView(alloc: Allocation): AllocView {
  return { ...alloc, TaskStates: taskStatesView(alloc.TaskStates), ...legacyResources(alloc.AllocatedResources) };
}

/** The row of an allocation list (GET /v1/allocations, a job's, an evaluation's, a deployment's). */
export function allocStubView(alloc: Allocation): AllocListStub {
  const stub = allocStub(alloc);
  return { ...stub, TaskStates: taskStatesView(stub.TaskStates) };
}

/**
 * An allocation as an event carries it: without its Job, as Nomad strips it (the job is the
 * Job topic's; a dispatched job's payload in every allocation event breaks the Go client's
 * decoding of the stream and bloats it).
 */
export function allocEventView(alloc: Allocation): AllocView {
  return { ...allocView(alloc), Job: null };
}
