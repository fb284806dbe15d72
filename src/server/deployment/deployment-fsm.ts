/**
 * The FSM's side of deployments: applying status updates, promotions and manual allocation
 * health, and keeping a deployment's counters in step with the plans and client updates that
 * touch its allocations. Deterministic like the rest of the FSM: time comes in the command.
 */
import type { AllocDeploymentStatus, Allocation, Deployment, DeploymentStatusUpdate, Job } from '../../structs/index.js';
import type { StateStore } from '../state/state-store.js';
import type { StreamEvent } from '../events/event.js';
import type { DeploymentAllocHealthCommand, DeploymentPromoteCommand, DeploymentStatusUpdateCommand } from '../fsm/commands.js';
import { countHealth, countPlacement } from './deployment-accounting.js';

/** The event a changed deployment publishes. */
export function deploymentChangedEvent(d: Deployment, index: number): StreamEvent {
  return {
    Topic: 'Deployment',
    Type: 'DeploymentStatusUpdate',
    Key: d.ID,
    Namespace: d.Namespace,
    FilterKeys: [d.JobID],
    Index: index,
    Payload: { Deployment: d },
  };
}

function jobStableEvent(job: Job, index: number): StreamEvent {
  return { Topic: 'Job', Type: 'JobUpdated', Key: job.ID, Namespace: job.Namespace, FilterKeys: null, Index: index, Payload: { Job: job } };
}

function allocHealthEvent(a: Allocation, index: number): StreamEvent {
  return {
    Topic: 'Allocation',
    Type: 'AllocationUpdated',
    Key: a.ID,
    Namespace: a.Namespace,
    FilterKeys: [a.JobID, a.DeploymentID].filter(Boolean),
    Index: index,
    Payload: { Allocation: a },
  };
}

/** Stores a status change; a successful deployment marks its job version stable. */
export function applyDeploymentStatus(state: StateStore, u: DeploymentStatusUpdate, index: number, ev: StreamEvent[]): void {
  const prev = state.deploymentById(u.DeploymentID);
  if (!prev) return;
  const d: Deployment = { ...prev, Status: u.Status, StatusDescription: u.StatusDescription, ModifyIndex: index };
  state.putDeployment(d, index);
  ev.push(deploymentChangedEvent(d, index));
  if (u.Status === 'successful') {
    const job = state.setJobVersionStable(d.Namespace, d.JobID, d.JobVersion, true, index);
    if (job) ev.push(jobStableEvent(job, index));
  }
}

/** Applies DeploymentStatusUpdate (its evaluation is stored by the FSM). */
export function applyDeploymentStatusCommand(state: StateStore, cmd: DeploymentStatusUpdateCommand, index: number, ev: StreamEvent[]): void {
  applyDeploymentStatus(state, cmd.Update, index, ev);
}

/** Applies DeploymentPromote: the named (or all canary) groups become Promoted. */
export function applyDeploymentPromote(state: StateStore, cmd: DeploymentPromoteCommand, index: number, ev: StreamEvent[]): void {
  const prev = state.deploymentById(cmd.DeploymentID);
  if (!prev) return;
  const groups = { ...prev.TaskGroups };
  for (const [name, s] of Object.entries(groups)) {
    const wanted = cmd.Groups === null ? s.DesiredCanaries > 0 : cmd.Groups.includes(name);
    if (!wanted) continue;
    groups[name] = { ...s, Promoted: true };
    // As Nomad's promotion: the promoted canaries are canaries no more.
    for (const id of s.PlacedCanaries ?? []) {
      const a = state.allocById(id);
      if (!a?.DeploymentStatus?.Canary) continue;
      const promoted: Allocation = { ...a, DeploymentStatus: { ...a.DeploymentStatus, Canary: false, ModifyIndex: index }, ModifyIndex: index };
      state.putAlloc(promoted, index);
      ev.push(allocHealthEvent(promoted, index));
    }
  }
  const d: Deployment = {
    ...prev,
    TaskGroups: groups,
    // "requires manual promotion" no longer holds.
    StatusDescription: prev.Status === 'running' ? 'Deployment is running' : prev.StatusDescription,
    ModifyIndex: index,
  };
  state.putDeployment(d, index);
  ev.push(deploymentChangedEvent(d, index));
}

/** Applies DeploymentAllocHealth: sets the named allocations' health and counts it. */
export function applyDeploymentAllocHealth(state: StateStore, cmd: DeploymentAllocHealthCommand, index: number, ev: StreamEvent[]): void {
  const at = new Date(Math.floor(cmd.Now / 1e6)).toISOString();
  const mark = (id: string, healthy: boolean): void => {
    const prev = state.allocById(id);
    if (!prev || prev.DeploymentID !== cmd.DeploymentID) return;
    const status: AllocDeploymentStatus = { Healthy: healthy, Timestamp: at, Canary: prev.DeploymentStatus?.Canary ?? false, ModifyIndex: index };
    const a: Allocation = { ...prev, DeploymentStatus: status, ModifyIndex: index };
    state.putAlloc(a, index, prev);
    ev.push(allocHealthEvent(a, index));
    noteAllocHealth(state, prev, prev.DeploymentStatus, status, cmd.Now, index, ev);
  };
  for (const id of cmd.HealthyAllocationIDs) mark(id, true);
  for (const id of cmd.UnhealthyAllocationIDs) mark(id, false);
}

/** Counts a newly placed allocation in its deployment. */
export function notePlacement(state: StateStore, a: Allocation, index: number, ev: StreamEvent[]): void {
  if (!a.DeploymentID) return;
  const d = state.deploymentById(a.DeploymentID);
  if (!d) return;
  const next = countPlacement(d, a);
  if (next === d) return;
  const stored = { ...next, ModifyIndex: index };
  state.putDeployment(stored, index);
  ev.push(deploymentChangedEvent(stored, index));
}

/** Counts a change of an allocation's reported health in its deployment. */
export function noteAllocHealth(
  state: StateStore,
  a: Allocation,
  before: AllocDeploymentStatus | null,
  after: AllocDeploymentStatus | null,
  nowNanos: number,
  index: number,
  ev: StreamEvent[],
): void {
  if (!a.DeploymentID) return;
  const d = state.deploymentById(a.DeploymentID);
  if (!d) return;
  const next = countHealth(d, a, before, after, Math.floor(nowNanos / 1e6));
  if (next === d) return;
  const stored = { ...next, ModifyIndex: index };
  state.putDeployment(stored, index);
  ev.push(deploymentChangedEvent(stored, index));
}
