/**
 * SchedulerHarness: the real state store, written through the real FSM, and a recording Planner
 * that hands plans to the real plan applier, as Nomad's scheduler tests run over a real in-memory
 * state store. Tests seed jobs, nodes and allocations through FSM commands, the scheduler reads
 * a copy-on-write snapshot (so the store's fast paths — indexes, per-node usage — are exercised),
 * and every plan is re-checked by the leader's applier before it is committed. The planner can be
 * told to reject one node's placements once, which answers RefreshIndex > 0 (a partial commit).
 */
import type { Allocation, Deployment, Evaluation, Job, Node, Plan, PlanResult } from '../../src/structs/index.js';
import type { Planner, SchedulerContext, SchedulerState } from '../../src/scheduler/interfaces.js';
import { schedulerFactoryFor } from '../../src/scheduler/index.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import { PlanApplier } from '../../src/server/plan/plan-applier.js';
import { StateStore } from '../../src/server/state/state-store.js';
import { isLiveAlloc } from '../../src/structs/alloc.js';

const NOW_NS = 1_700_000_000_000 * 1_000_000;

/**
 * The harness's cluster state: reads are the real StateStore's; writes are FSM commands, each
 * applied at the next index (what the log would do after committing it).
 */
export class HarnessState {
  readonly store = new StateStore();
  private readonly fsm = new Fsm(this.store);

  /** Applies one command at the next index; answers the index. */
  apply(cmd: Command): number {
    const index = this.store.latestIndex() + 1;
    this.fsm.apply(cmd, index);
    return index;
  }

  index(): number { return this.store.latestIndex(); }
  jobById(namespace: string, id: string): Job | undefined { return this.store.jobById(namespace, id); }
  nodes(): Iterable<Node> { return this.store.nodes(); }
  nodeById(id: string): Node | undefined { return this.store.nodeById(id); }
  allocById(id: string): Allocation | undefined { return this.store.allocById(id); }
  allocsByJob(namespace: string, jobId: string): Allocation[] { return this.store.allocsByJob(namespace, jobId); }
  allocsByNode(nodeId: string): Allocation[] { return this.store.allocsByNode(nodeId); }
  latestDeploymentByJob(namespace: string, jobId: string): Deployment | undefined {
    let latest: Deployment | undefined;
    for (const d of this.store.deploymentsByJob(namespace, jobId)) if (!latest || d.CreateIndex > latest.CreateIndex) latest = d;
    return latest;
  }
  evalById(id: string): Evaluation | undefined { return this.store.evalById(id); }
  /** A read-only snapshot at the current index, as a worker hands the scheduler. */
  snapshot(): SchedulerState { return this.store.snapshot(); }

  /** Registers (or updates) a job; the stored indexes and version are copied back into `job`. */
  upsertJob(job: Job): void {
    this.apply({ Type: 'JobRegister', Job: job, Eval: null, Now: NOW_NS });
    const stored = this.store.jobById(job.Namespace, job.ID)!;
    Object.assign(job, { CreateIndex: stored.CreateIndex, ModifyIndex: stored.ModifyIndex, JobModifyIndex: stored.JobModifyIndex, Version: stored.Version });
  }

  /** Registers (or re-registers) a node, then applies the status, eligibility and drain it carries. */
  upsertNode(node: Node): void {
    const prev = this.store.nodeById(node.ID);
    this.apply({ Type: 'NodeRegister', Node: node, Evals: [], Now: NOW_NS });
    if (prev && prev.SchedulingEligibility !== node.SchedulingEligibility) {
      this.apply({ Type: 'NodeUpdateEligibility', NodeID: node.ID, Eligibility: node.SchedulingEligibility, Evals: [], Now: NOW_NS });
    }
    node.ModifyIndex = this.store.nodeById(node.ID)!.ModifyIndex;
  }

  /**
   * Writes an allocation as the servers and its client would have: what the servers decide (a
   * plan result) and, when it differs from a fresh placement, what its client reported.
   */
  upsertAlloc(a: Allocation): void {
    const prev = this.store.allocById(a.ID);
    const job = a.Job ?? this.store.jobById(a.Namespace, a.JobID) ?? null;
    this.apply({ Type: 'ApplyPlanResults', EvalID: a.EvalID, Job: job, AllocsUpdated: [{ ...a, Job: null }], AllocsStopped: [], Deployment: null, DeploymentUpdates: [], Evals: [], Now: NOW_NS });
    const stored = this.store.allocById(a.ID)!;
    if (prev && (stored.DesiredStatus !== a.DesiredStatus || stored.DesiredDescription !== a.DesiredDescription)) {
      this.apply({ Type: 'ApplyPlanResults', EvalID: a.EvalID, Job: null, AllocsUpdated: [], AllocsStopped: [{ ID: a.ID, DesiredStatus: a.DesiredStatus, DesiredDescription: a.DesiredDescription, ClientStatus: '', FollowupEvalID: a.FollowupEvalID }], Deployment: null, DeploymentUpdates: [], Evals: [], Now: NOW_NS });
    }
    const reported = this.store.allocById(a.ID)!;
    if (reported.ClientStatus !== a.ClientStatus || reported.TaskStates !== a.TaskStates || reported.DeploymentStatus !== a.DeploymentStatus) {
      this.apply({
        Type: 'AllocClientUpdate',
        Allocs: [{ ID: a.ID, NodeID: a.NodeID, ClientStatus: a.ClientStatus, ClientDescription: a.ClientDescription, TaskStates: a.TaskStates ?? {}, DeploymentStatus: a.DeploymentStatus }],
        Evals: [],
        Now: NOW_NS,
      });
    }
    a.ModifyIndex = this.store.allocById(a.ID)!.ModifyIndex;
  }

  /** Inserts or replaces a deployment. */
  upsertDeployment(d: Deployment): void {
    this.apply({ Type: 'DeploymentUpsert', Deployment: d, Now: NOW_NS });
  }

  /** Purges a job. */
  deleteJob(namespace: string, id: string): void {
    this.apply({ Type: 'JobDeregister', Namespace: namespace, JobID: id, Purge: true, Eval: null, Now: NOW_NS });
  }

  /** Inserts or updates evaluations. */
  putEvals(evals: Evaluation[]): void {
    this.apply({ Type: 'EvalUpdate', Evals: evals, Now: NOW_NS });
  }
}

/** Records everything a scheduler asked for; plans go through the real plan applier. */
export class SchedulerHarness implements Planner {
  readonly state = new HarnessState();
  readonly plans: Plan[] = [];
  readonly evalUpdates: Evaluation[] = [];
  readonly createdEvals: Evaluation[] = [];
  readonly reblockedEvals: Evaluation[] = [];
  /** Node IDs whose placements the next plan drops (once each). */
  readonly rejectNodeOnce = new Set<string>();
  now = 1_700_000_000_000;
  /** The most new allocations one evaluation places (the scheduler's default when undefined). */
  maxPlacementsPerPlan: number | undefined = undefined;
  /** The scheduler's slice before it yields to the event loop (its default when undefined). */
  sliceMs: number | undefined = undefined;
  private seed = 42;
  private ids = 0;
  private readonly applier = new PlanApplier({
    state: this.state.store,
    commit: async (cmd) => this.state.apply(cmd),
    nowNanos: () => this.now * 1_000_000,
  });

  /** A seeded linear-congruential random source, so runs repeat. */
  random = (): number => {
    this.seed = (this.seed * 1103515245 + 12345) % 2147483648;
    return this.seed / 2147483648;
  };

  context(): SchedulerContext {
    const ctx: SchedulerContext = { now: this.now, random: this.random, newId: () => `id-${String(++this.ids).padStart(6, '0')}` };
    if (this.maxPlacementsPerPlan !== undefined) ctx.maxPlacementsPerPlan = this.maxPlacementsPerPlan;
    if (this.sliceMs !== undefined) ctx.sliceMs = this.sliceMs;
    return ctx;
  }

  /** Runs the scheduler for the eval's type over a snapshot of the current state. */
  async process(evaluation: Evaluation): Promise<void> {
    const factory = schedulerFactoryFor(evaluation.Type);
    if (!factory) throw new Error(`no scheduler for ${evaluation.Type}`);
    this.state.putEvals([evaluation]);
    await factory(this.state.snapshot(), this, this.context()).process(evaluation);
  }

  async submitPlan(plan: Plan): Promise<{ result: PlanResult; newState: SchedulerState | null }> {
    this.plans.push(plan);
    // A node told to reject: its placements are dropped before the applier sees the plan.
    const dropped = Object.keys(plan.NodeAllocation).filter((n) => this.rejectNodeOnce.delete(n));
    const submitted: Plan = dropped.length === 0
      ? plan
      : { ...plan, NodeAllocation: Object.fromEntries(Object.entries(plan.NodeAllocation).filter(([n]) => !dropped.includes(n))) };
    const result = await this.applier.submit(submitted);
    if (dropped.length > 0) result.RefreshIndex = Math.max(result.RefreshIndex, this.state.index());
    return { result, newState: result.RefreshIndex > 0 ? this.state.snapshot() : null };
  }

  async updateEval(evaluation: Evaluation): Promise<void> {
    this.evalUpdates.push(evaluation);
    this.state.putEvals([evaluation]);
  }

  async createEval(evaluation: Evaluation): Promise<void> {
    this.createdEvals.push(evaluation);
    this.state.putEvals([evaluation]);
  }

  async reblockEval(evaluation: Evaluation): Promise<void> {
    this.reblockedEvals.push(evaluation);
    this.state.putEvals([evaluation]);
  }

  /** The last plan, or throws. */
  lastPlan(): Plan {
    const p = this.plans[this.plans.length - 1];
    if (!p) throw new Error('no plan submitted');
    return p;
  }

  /** The last eval update, or throws. */
  lastEval(): Evaluation {
    const e = this.evalUpdates[this.evalUpdates.length - 1];
    if (!e) throw new Error('no eval update');
    return e;
  }
}

/** All allocations of a plan's NodeAllocation, flattened. */
export function planPlaced(plan: Plan): Allocation[] {
  return Object.values(plan.NodeAllocation).flat();
}

/** All allocations of a plan's NodeUpdate, flattened. */
export function planStopped(plan: Plan): Allocation[] {
  return Object.values(plan.NodeUpdate).flat();
}

/** Live (desired run, not client-terminal) allocations of a job in the harness state. */
export function liveAllocs(h: SchedulerHarness, jobId: string, namespace = 'default'): Allocation[] {
  return h.state.allocsByJob(namespace, jobId).filter(isLiveAlloc);
}
