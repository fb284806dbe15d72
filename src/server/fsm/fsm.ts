/**
 * The FSM: applies log commands, in log order, to the state store and returns the events they
 * publish. apply() is deterministic — everything it needs (time included) is in the command
 * and the index — so replaying the log rebuilds the same state.
 */
import { Table } from '../state/state-reader.js';
import type { Allocation, DesiredTransition, Evaluation, Job, Node, NodeEvent } from '../../structs/index.js';
import { isServerDecidedClientStatus, isTerminalClientStatus } from '../../structs/alloc.js';
import { revivesTerminalAlloc } from '../client-status-revival.js';
import type { StateStore } from '../state/state-store.js';

import type { StreamEvent } from '../events/event.js';
import type {
  AllocClientUpdateCommand,
  AllocUpdateDesiredTransitionCommand,
  ApplyPlanResultsCommand,
  Command,
  JobDeregisterCommand,
  JobRegisterCommand,
  NodeRegisterCommand,
  NodeUpdateDrainCommand,
} from './commands.js';
import type { DrainMetadata } from '../drain/drain-status.js';
import { MetricCompactor } from '../state/compact-metric.js';
import { applyVariableDelete, applyVariableLock, applyVariableSet } from './variable-fsm.js';
import { readSnapshotFile } from '../snapshot/snapshot-file.js';
import { applyServiceRegistrationDelete, applyServiceRegistrationUpsert, deleteNodeServices, serviceDeregistrationEvents } from './service-registration-fsm.js';
import { applyNamespaceDelete, applyNamespaceUpsert, ensureJobNamespace } from './namespace-fsm.js';
import { applyHostVolumeDelete, applyHostVolumeUpsert, updateHostVolumesFromNode } from './host-volume-fsm.js';
import { applyAclCommand, isAclCommand } from './acl-commands.js';
import { stampScalingPolicies } from '../../structs/scaling-policy.js';
import {
  applyDeploymentAllocHealth,
  applyDeploymentPromote,
  applyDeploymentStatus,
  applyDeploymentStatusCommand,
  noteAllocHealth,
  notePlacement,
  deploymentChangedEvent,
} from '../deployment/deployment-fsm.js';

/** How many events a node keeps, as Nomad. */
const NODE_EVENTS_KEPT = 10;

/** Fields of a job that are bookkeeping, not spec: they don't make a new version. */
const VOLATILE_JOB_FIELDS = new Set([
  'VersionTag',
  'Status',
  'StatusDescription',
  'Stable',
  'Version',
  'SubmitTime',
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
]);

/**
 * True when two jobs differ in anything but bookkeeping fields. As Nomad's Job.SpecChanged, only
 * the job's own bookkeeping fields are ignored (and the indexes the FSM stamps on its groups'
 * scaling policies): a key of the same name inside the spec — `env { Version = "2" }`, a meta
 * `Status` — is spec, and changing it makes a new version that updates the allocations.
 */
export function jobSpecChanged(a: Job, b: Job): boolean {
  const strip = (j: Job): string => {
    const policies = new Set<unknown>((j.TaskGroups ?? []).map((g) => g.Scaling).filter(Boolean));
    return JSON.stringify(j, function (this: unknown, k, v: unknown) {
      if (this === j && VOLATILE_JOB_FIELDS.has(k)) return undefined;
      if (policies.has(this) && (k === 'CreateIndex' || k === 'ModifyIndex')) return undefined;
      return v;
    });
  };
  return strip(a) !== strip(b);
}

/** Applies commands to one state store. */
export class Fsm {
  /** Keeps the placement metrics of stored allocations compact (compact-metric.ts). */
  private readonly metrics = new MetricCompactor();

  constructor(readonly state: StateStore) {}

  /**
   * Applies one command at a log index and returns the events it publishes. All or nothing: if
   * it throws, the store is left exactly as before (StateStore.transact).
   */
  apply(cmd: Command, index: number): StreamEvent[] {
    return this.state.transact(() => this.applyUnguarded(cmd, index));
  }

  private applyUnguarded(cmd: Command, index: number): StreamEvent[] {
    const ev: StreamEvent[] = [];
    switch (cmd.Type) {
      case 'JobRegister':
        this.jobRegister(cmd, index, ev);
        break;
      case 'JobDeregister':
        this.jobDeregister(cmd, index, ev);
        break;
      case 'EvalUpdate':
        for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
        break;
      case 'EvalDelete':
        for (const id of cmd.EvalIDs) this.state.deleteEval(id, index);
        for (const id of cmd.AllocIDs) this.state.deleteAlloc(id, index);
        break;
      case 'ApplyPlanResults':
        this.applyPlan(cmd, index, ev);
        break;
      case 'NodeRegister':
        this.nodeRegister(cmd, index, ev);
        break;
      case 'NodeUpdateStatus': {
        const n = this.state.nodeById(cmd.NodeID);
        if (n) {
          const node: Node = {
            ...n,
            Status: cmd.Status,
            StatusUpdatedAt: Math.floor(cmd.Now / 1e9),
            Events: appendNodeEvent(n.Events, cmd.Event, index),
            ModifyIndex: index,
          };
          this.state.putNode(node, index);
          ev.push(nodeEvent('NodeEvent', node, index));
          // A node marked down loses its service registrations (nobody vouches for them now).
          if (cmd.Status === 'down') deleteNodeServices(this.state, node.ID, index);
        }
        for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
        break;
      }
      case 'NodeUpdateEligibility': {
        const n = this.state.nodeById(cmd.NodeID);
        if (n) {
          const node: Node = { ...n, SchedulingEligibility: cmd.Eligibility, ModifyIndex: index };
          this.state.putNode(node, index);
          ev.push(nodeEvent('NodeEligibility', node, index));
        }
        for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
        break;
      }
      case 'NodeUpdateDrain':
        this.nodeUpdateDrain(cmd, index, ev);
        break;
      case 'NodeDeregister':
        for (const id of cmd.NodeIDs) {
          const n = this.state.nodeById(id);
          if (!n) continue;
          this.state.deleteNode(id, index);
          deleteNodeServices(this.state, id, index);
          ev.push(nodeEvent('NodeDeregistration', n, index));
        }
        for (const e of cmd.Evals ?? []) this.putEval(e, index, cmd.Now, ev);
        break;
      case 'AllocClientUpdate':
        this.allocClientUpdate(cmd, index, ev);
        break;
      case 'AllocUpdateDesiredTransition':
        this.allocDesiredTransition(cmd, index, ev);
        break;
      case 'DeploymentUpsert': {
        const prev = this.state.deploymentById(cmd.Deployment.ID);
        const d = { ...cmd.Deployment, CreateIndex: prev?.CreateIndex ?? index, ModifyIndex: index };
        this.state.putDeployment(d, index);
        ev.push(deploymentChangedEvent(d, index));
        break;
      }
      case 'DeploymentStatusUpdate':
        applyDeploymentStatusCommand(this.state, cmd, index, ev);
        if (cmd.Eval) this.putEval(cmd.Eval, index, cmd.Now, ev);
        break;
      case 'DeploymentPromote':
        applyDeploymentPromote(this.state, cmd, index, ev);
        if (cmd.Eval) this.putEval(cmd.Eval, index, cmd.Now, ev);
        break;
      case 'DeploymentAllocHealth':
        applyDeploymentAllocHealth(this.state, cmd, index, ev);
        if (cmd.Eval) this.putEval(cmd.Eval, index, cmd.Now, ev);
        break;
      case 'JobStability': {
        const changed = this.state.setJobVersionStable(cmd.Namespace, cmd.JobID, cmd.Version, cmd.Stable, index);
        const cur = this.state.jobById(cmd.Namespace, cmd.JobID);
        if (changed && cur) ev.push(jobEvent('JobRegistered', cur, index));
        break;
      }
      case 'JobVersionTag':
        if (this.state.setJobVersionTag(cmd.Namespace, cmd.JobID, cmd.Name, cmd.Version, cmd.Tag, index)) {
          const cur = this.state.jobById(cmd.Namespace, cmd.JobID);
          if (cur) ev.push(jobEvent('JobRegistered', cur, index));
        }
        break;
      case 'ScalingEventRecord':
        if (this.state.jobById(cmd.Namespace, cmd.JobID)) {
          this.state.scalingEvents.add(cmd.Namespace, cmd.JobID, cmd.Group, { ...cmd.Event, CreateIndex: index });
          this.state.touch(index, Table.Jobs);
        }
        break;
      case 'NodePoolUpsert':
        this.state.upsertNodePools(cmd.Pools, index);
        break;
      case 'NodePoolDelete':
        this.state.deleteNodePools(cmd.Names, index);
        break;
      case 'SchedulerConfigSet':
        this.state.setSchedulerConfig(cmd.Config, index);
        break;
      case 'AutopilotConfigSet':
        if (cmd.Cas === undefined || this.state.autopilotConfig().ModifyIndex === cmd.Cas) this.state.setAutopilotConfig(cmd.Config, index);
        break;
      case 'JobSummaryReconcile':
        this.state.reconcileJobSummaries(index);
        break;
      case 'NamespaceUpsert':
        applyNamespaceUpsert(this.state, cmd, index);
        break;
      case 'NamespaceDelete':
        applyNamespaceDelete(this.state, cmd, index);
        break;
      case 'VariableSet':
        applyVariableSet(this.state, cmd, index);
        break;
      case 'VariableDelete':
        applyVariableDelete(this.state, cmd, index);
        break;
      case 'VariableLock':
        applyVariableLock(this.state, cmd, index);
        break;
      case 'ServiceRegistrationUpsert':
        applyServiceRegistrationUpsert(this.state, cmd, index, ev);
        break;
      case 'ServiceRegistrationDelete':
        applyServiceRegistrationDelete(this.state, cmd, index);
        break;
      case 'HostVolumeUpsert':
        applyHostVolumeUpsert(this.state, cmd, index, ev);
        break;
      case 'HostVolumeDelete':
        applyHostVolumeDelete(this.state, cmd, index, ev);
        break;
      case 'SnapshotRestore':
        // Decoded whole before anything changes: a file that does not decode fails the apply
        // with the state untouched (the endpoint already refused such files).
        this.state.restoreAt(readSnapshotFile(Buffer.from(cmd.Snapshot, 'base64')), index);
        break;
      default: {
        if (isAclCommand(cmd)) {
          applyAclCommand(this.state, cmd, index);
          break;
        }
        const never: never = cmd;
        throw new Error(`unknown command ${(never as { Type: string }).Type}`);
      }
    }
    for (const e of serviceDeregistrationEvents(this.state, index)) ev.push(e);
    this.state.finishApply(index);
    return ev;
  }

  private jobRegister(cmd: JobRegisterCommand, index: number, ev: StreamEvent[]): void {
    const existing = this.state.jobById(cmd.Job.Namespace, cmd.Job.ID);
    const changed = !existing || jobSpecChanged(existing, cmd.Job);
    const job: Job = {
      ...cmd.Job,
      CreateIndex: existing?.CreateIndex ?? index,
      ModifyIndex: index,
      JobModifyIndex: changed ? index : existing.JobModifyIndex,
      Version: !existing ? 0 : changed ? existing.Version + 1 : existing.Version,
      SubmitTime: cmd.Now,
      Status: existing?.Status ?? 'pending',
      Stable: changed ? false : (existing?.Stable ?? false),
      // A tag names one version: a new version starts untagged, an unchanged one keeps its tag.
      VersionTag: changed ? null : (existing?.VersionTag ?? null),
    };
    // Scaling policies are created and modified with the job's spec (IDs come from the endpoint).
    job.TaskGroups = stampScalingPolicies(job.TaskGroups, job.JobModifyIndex);
    this.state.putJob(job, index);
    ensureJobNamespace(this.state, job.Namespace, index);
    if (cmd.ScalingEvent) {
      this.state.scalingEvents.add(job.Namespace, job.ID, cmd.ScalingEvent.Group, { ...cmd.ScalingEvent.Event, EvalID: cmd.Eval?.ID ?? null, CreateIndex: index });
      this.state.touch(index, Table.Jobs);
    }
    if (cmd.Submission && changed) {
      this.state.submissions.put({ ...cmd.Submission, Namespace: job.Namespace, JobID: job.ID, Version: job.Version, JobModifyIndex: job.JobModifyIndex });
    }
    ev.push(jobEvent('JobRegistered', job, index));
    if (cmd.Eval) this.putEval({ ...cmd.Eval, JobModifyIndex: job.JobModifyIndex }, index, cmd.Now, ev);
  }

  private jobDeregister(cmd: JobDeregisterCommand, index: number, ev: StreamEvent[]): void {
    const existing = this.state.jobById(cmd.Namespace, cmd.JobID);
    if (existing && cmd.NoShutdownDelay) {
      // Also the allocations already stopping: one waiting out its delay is cut short.
      for (const a of this.state.allocsByJob(cmd.Namespace, cmd.JobID)) {
        if (!isTerminalClientStatus(a.ClientStatus)) this.mergeDesiredTransition(a, { NoShutdownDelay: true }, index, ev);
      }
    }
    if (existing) {
      if (cmd.Purge) {
        this.state.deleteJob(cmd.Namespace, cmd.JobID, index);
        ev.push(jobEvent('JobDeregistered', existing, index));
      } else {
        const job: Job = {
          ...existing,
          Stop: true,
          Status: 'dead',
          Version: existing.Stop ? existing.Version : existing.Version + 1,
          VersionTag: existing.Stop ? (existing.VersionTag ?? null) : null,
          JobModifyIndex: existing.Stop ? existing.JobModifyIndex : index,
          ModifyIndex: index,
          SubmitTime: cmd.Now,
          Stable: false,
        };
        this.state.putJob(job, index);
        ev.push(jobEvent('JobDeregistered', job, index));
      }
    }
    if (cmd.Eval) this.putEval(cmd.Eval, index, cmd.Now, ev);
  }

  private putEval(e: Evaluation, index: number, now: number, ev: StreamEvent[]): void {
    const prev = this.state.evalById(e.ID);
    const stored: Evaluation = {
      ...e,
      CreateIndex: prev?.CreateIndex ?? index,
      ModifyIndex: index,
      CreateTime: prev?.CreateTime ?? (e.CreateTime || now),
      ModifyTime: now,
    };
    this.state.putEval(stored, index);
    ev.push({
      Topic: 'Evaluation',
      Type: 'EvaluationUpdated',
      Key: stored.ID,
      Namespace: stored.Namespace,
      FilterKeys: [stored.JobID, stored.DeploymentID].filter(Boolean),
      Index: index,
      Payload: { Evaluation: stored },
    });
  }

  private applyPlan(cmd: ApplyPlanResultsCommand, index: number, ev: StreamEvent[]): void {
    const start = ev.length;
    this.applyPlanUncoalesced(cmd, index, ev);
    keepLastDeploymentEvents(ev, start);
  }

  private applyPlanUncoalesced(cmd: ApplyPlanResultsCommand, index: number, ev: StreamEvent[]): void {
    let job: Job | null = null;
    if (cmd.Job) {
      const versions = this.state.jobVersions(cmd.Job.Namespace, cmd.Job.ID);
      // Share the stored version's object instead of keeping one copy per allocation.
      job = versions.find((v) => v.Version === cmd.Job?.Version && v.JobModifyIndex === cmd.Job.JobModifyIndex) ?? cmd.Job;
    }
    if (cmd.Deployment) {
      const prev = this.state.deploymentById(cmd.Deployment.ID);
      const d = { ...cmd.Deployment, CreateIndex: prev?.CreateIndex ?? index, ModifyIndex: index };
      this.state.putDeployment(d, index);
      ev.push(deploymentChangedEvent(d, index));
    }
    for (const u of cmd.DeploymentUpdates) applyDeploymentStatus(this.state, u, index, ev);
    for (const s of cmd.AllocsStopped) {
      const prev = this.state.allocById(s.ID);
      if (!prev) continue;
      const a: Allocation = {
        ...prev,
        DesiredStatus: s.DesiredStatus,
        DesiredDescription: s.DesiredDescription,
        ClientStatus: s.ClientStatus || prev.ClientStatus,
        FollowupEvalID: s.FollowupEvalID || prev.FollowupEvalID,
        ModifyIndex: index,
        AllocModifyIndex: index,
        ModifyTime: cmd.Now,
      };
      this.state.putAlloc(a, index, prev);
      ev.push(allocEvent('PlanResult', a, index));
    }
    // A placement the scheduler created has CreateIndex 0 and is not stored yet (the plan
    // applier relies on the same): only allocations stored before, or earlier in this command,
    // are looked up in the (large) allocation table.
    const placedHere = new Set<string>();
    for (const u of cmd.AllocsUpdated) {
      const prev = u.CreateIndex === 0 && !placedHere.has(u.ID) ? null : this.state.allocById(u.ID);
      if (u.CreateIndex === 0) placedHere.add(u.ID);
      // The node's own strings, not the copies the log payload decoded for every allocation.
      const node = this.state.nodeById(u.NodeID);
      const a: Allocation = {
        ...u,
        NodeID: node?.ID ?? u.NodeID,
        NodeName: node !== undefined && node.Name === u.NodeName ? node.Name : u.NodeName,
        Metrics: this.metrics.compact(u.Metrics, node?.ID ?? u.NodeID),
        Job: job ?? u.Job ?? prev?.Job ?? null,
        CreateIndex: prev?.CreateIndex ?? index,
        ModifyIndex: index,
        AllocModifyIndex: index,
        CreateTime: prev?.CreateTime ?? (u.CreateTime || cmd.Now),
        ModifyTime: cmd.Now,
      };
      if (prev) {
        // An in-place update keeps what the client reported, unless the server marks it lost.
        a.TaskStates = prev.TaskStates;
        a.DeploymentStatus = prev.DeploymentStatus;
        if (!isServerDecidedClientStatus(u.ClientStatus)) {
          a.ClientStatus = prev.ClientStatus;
          a.ClientDescription = prev.ClientDescription;
        }
      }
      this.state.putAlloc(a, index, prev);
      ev.push(allocEvent('PlanResult', a, index));
      if (!prev) notePlacement(this.state, a, index, ev);
      else if (a.DeploymentID && a.DeploymentID !== prev.DeploymentID) {
        // Updated in place into a new deployment: it counts there, with the health it has.
        notePlacement(this.state, a, index, ev);
        noteAllocHealth(this.state, a, null, a.DeploymentStatus, cmd.Now, index, ev);
      }
      if (!prev && a.PreviousAllocation) {
        const old = this.state.allocById(a.PreviousAllocation);
        if (old) {
          const linked = { ...old, NextAllocation: a.ID, ModifyIndex: index };
          this.state.putAlloc(linked, index);
        }
      }
    }
    for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
  }

  private nodeRegister(cmd: NodeRegisterCommand, index: number, ev: StreamEvent[]): void {
    const prev = this.state.nodeById(cmd.Node.ID);
    // A registered node belongs to the holder of its SecretID: a registration carrying another
    // secret changes nothing (the endpoint refuses it first; this also holds when two first
    // registrations of one ID race past that check, so the later never takes the node over).
    if (prev && prev.SecretID && prev.SecretID !== cmd.Node.SecretID) return;
    const registered: NodeEvent = {
      Message: 'Node registered',
      Subsystem: 'Cluster',
      Details: null,
      Timestamp: new Date(Math.floor(cmd.Now / 1e6)).toISOString(),
      CreateIndex: index,
    };
    const node: Node = {
      ...cmd.Node,
      CreateIndex: prev?.CreateIndex ?? index,
      ModifyIndex: index,
      StatusUpdatedAt: Math.floor(cmd.Now / 1e9),
      // The servers own eligibility and drain; a re-registering client keeps them.
      SchedulingEligibility: prev?.SchedulingEligibility ?? cmd.Node.SchedulingEligibility,
      DrainStrategy: prev?.DrainStrategy ?? cmd.Node.DrainStrategy,
      Drain: prev?.Drain ?? cmd.Node.Drain,
      Events: prev ? prev.Events : appendNodeEvent(null, registered, index),
    };
    this.state.putNode(node, index);
    updateHostVolumesFromNode(this.state, node, index, ev);
    // As Nomad's: a node registering in a pool nobody created creates it.
    if (node.NodePool && !this.state.nodePoolByName(node.NodePool)) {
      this.state.upsertNodePools([{ Name: node.NodePool, Description: '', Meta: null, SchedulerConfiguration: null }], index);
    }
    ev.push(nodeEvent('NodeRegistration', node, index));
    for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
  }

  private nodeUpdateDrain(cmd: NodeUpdateDrainCommand, index: number, ev: StreamEvent[]): void {
    const n = this.state.nodeById(cmd.NodeID);
    if (n) {
      const at = new Date(Math.floor(cmd.Now / 1e6)).toISOString();
      const prev = n.LastDrain as DrainMetadata | null;
      const started = cmd.DrainStrategy && !n.DrainStrategy ? at : (prev?.StartedAt ?? at);
      const lastDrain: DrainMetadata = {
        StartedAt: started,
        UpdatedAt: at,
        Status: cmd.Status,
        AccessorID: prev?.AccessorID ?? '',
        Meta: cmd.Meta ?? prev?.Meta ?? null,
      };
      const eligibility = cmd.DrainStrategy ? 'ineligible' : cmd.MarkEligible ? 'eligible' : n.SchedulingEligibility;
      const node: Node = {
        ...n,
        DrainStrategy: cmd.DrainStrategy,
        Drain: cmd.DrainStrategy !== null,
        SchedulingEligibility: eligibility,
        LastDrain: lastDrain,
        Events: appendNodeEvent(n.Events, cmd.Event, index),
        ModifyIndex: index,
      };
      this.state.putNode(node, index);
      ev.push(nodeEvent('NodeDrain', node, index));
    }
    for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
  }

  private allocClientUpdate(cmd: AllocClientUpdateCommand, index: number, ev: StreamEvent[]): void {
    for (const u of cmd.Allocs) {
      const prev = this.state.allocById(u.ID);
      // A terminal allocation stays terminal: the report is dropped whole (client-status-revival.ts).
      if (!prev || revivesTerminalAlloc(prev, u.ClientStatus)) continue;
      const a: Allocation = {
        ...prev,
        ClientStatus: u.ClientStatus,
        ClientDescription: u.ClientDescription,
        TaskStates: u.TaskStates,
        ...(u.NetworkStatus ? { NetworkStatus: u.NetworkStatus } : {}),
        // The server owns Canary (a promotion clears it); the client reports health only.
        DeploymentStatus: u.DeploymentStatus ? { ...u.DeploymentStatus, Canary: prev.DeploymentStatus?.Canary ?? u.DeploymentStatus.Canary } : prev.DeploymentStatus,
        ModifyIndex: index,
        ModifyTime: cmd.Now,
      };
      this.state.putAlloc(a, index);
      ev.push(allocEvent('AllocationUpdated', a, index));
      noteAllocHealth(this.state, prev, prev.DeploymentStatus, a.DeploymentStatus, cmd.Now, index, ev);
    }
    for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
  }

  private allocDesiredTransition(cmd: AllocUpdateDesiredTransitionCommand, index: number, ev: StreamEvent[]): void {
    for (const [id, t] of Object.entries(cmd.Allocs)) {
      const prev = this.state.allocById(id);
      if (prev) this.mergeDesiredTransition(prev, t, index, ev);
    }
    for (const e of cmd.Evals) this.putEval(e, index, cmd.Now, ev);
  }

  /** The allocation's client acts on the transition too (NoShutdownDelay), so AllocModifyIndex moves, as Nomad's. */
  private mergeDesiredTransition(prev: Allocation, t: DesiredTransition, index: number, ev: StreamEvent[]): void {
    const a: Allocation = { ...prev, DesiredTransition: { ...prev.DesiredTransition, ...t }, ModifyIndex: index, AllocModifyIndex: index };
    this.state.putAlloc(a, index);
    ev.push(allocEvent('AllocationUpdateDesiredStatus', a, index));
  }
}

function appendNodeEvent(events: NodeEvent[] | null, e: NodeEvent | null, index: number): NodeEvent[] | null {
  if (!e) return events;
  return [...(events ?? []), { ...e, CreateIndex: index }].slice(-NODE_EVENTS_KEPT);
}

function jobEvent(type: string, job: Job, index: number): StreamEvent {
  return { Topic: 'Job', Type: type, Key: job.ID, Namespace: job.Namespace, FilterKeys: null, Index: index, Payload: { Job: job } };
}

/**
 * Keeps, of the deployment events from position `start` on, only the last one of each
 * deployment (in its place): every placement of a plan counts in its deployment, and one
 * event per placement would publish (and keep in the event buffer) a copy of the deployment
 * per allocation. Nomad likewise publishes a changed object once per applied entry.
 */
function keepLastDeploymentEvents(ev: StreamEvent[], start: number): void {
  const last = new Map<string, number>();
  for (let i = start; i < ev.length; i++) if (ev[i]!.Topic === 'Deployment') last.set(ev[i]!.Key, i);
  if (last.size === 0) return;
  let w = start;
  for (let i = start; i < ev.length; i++) {
    const e = ev[i]!;
    if (e.Topic === 'Deployment' && last.get(e.Key) !== i) continue;
    ev[w++] = e;
  }
  ev.length = w;
}

function allocEvent(type: string, a: Allocation, index: number): StreamEvent {
  return {
    Topic: 'Allocation',
    Type: type,
    Key: a.ID,
    Namespace: a.Namespace,
    FilterKeys: [a.JobID, a.DeploymentID].filter(Boolean),
    Index: index,
    Payload: { Allocation: a },
  };
}

function nodeEvent(type: string, n: Node, index: number): StreamEvent {
  return { Topic: 'Node', Type: type, Key: n.ID, Namespace: '', FilterKeys: null, Index: index, Payload: { Node: n } };
}


