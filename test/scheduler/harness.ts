/**
 * SchedulerHarness: an in-memory SchedulerState seeded by the test, and a recording Planner
 * that applies plans to it, as Nomad's scheduler tests do. The planner can be told to reject
 * one node's placements once, which answers RefreshIndex > 0 (a partial commit).
 */
import type { Allocation, Deployment, Evaluation, Job, Node, Plan, PlanResult } from '../../src/structs/index.js';
import type { Planner, SchedulerContext, SchedulerState } from '../../src/scheduler/interfaces.js';
import { schedulerFactoryFor } from '../../src/scheduler/index.js';

/** A mutable in-memory cluster state implementing SchedulerState. */
export class InMemoryState implements SchedulerState {
  private idx = 1000;
  readonly jobs = new Map<string, Job>();
  readonly nodeMap = new Map<string, Node>();
  readonly allocs = new Map<string, Allocation>();
  readonly evals = new Map<string, Evaluation>();
  readonly deployments = new Map<string, Deployment>();

  index(): number { return this.idx; }
  bump(): number { return ++this.idx; }
  jobById(namespace: string, id: string): Job | undefined { return this.jobs.get(`${namespace}/${id}`); }
  nodes(): Iterable<Node> { return this.nodeMap.values(); }
  nodeById(id: string): Node | undefined { return this.nodeMap.get(id); }
  allocById(id: string): Allocation | undefined { return this.allocs.get(id); }
  allocsByJob(namespace: string, jobId: string): Allocation[] {
    return [...this.allocs.values()].filter((a) => a.Namespace === namespace && a.JobID === jobId);
  }
  allocsByNode(nodeId: string): Allocation[] {
    return [...this.allocs.values()].filter((a) => a.NodeID === nodeId);
  }
  latestDeploymentByJob(namespace: string, jobId: string): Deployment | undefined {
    let latest: Deployment | undefined;
    for (const d of this.deployments.values()) {
      if (d.Namespace === namespace && d.JobID === jobId && (!latest || d.CreateIndex > latest.CreateIndex)) latest = d;
    }
    return latest;
  }
  upsertDeployment(d: Deployment): void {
    const prev = this.deployments.get(d.ID);
    const index = this.bump();
    this.deployments.set(d.ID, { ...d, CreateIndex: prev?.CreateIndex ?? index, ModifyIndex: index });
  }
  evalById(id: string): Evaluation | undefined { return this.evals.get(id); }

  upsertJob(job: Job): void { job.ModifyIndex = job.JobModifyIndex = this.bump(); this.jobs.set(`${job.Namespace}/${job.ID}`, job); }
  upsertNode(node: Node): void { node.ModifyIndex = this.bump(); this.nodeMap.set(node.ID, node); }
  upsertAlloc(a: Allocation): void { a.ModifyIndex = this.bump(); this.allocs.set(a.ID, a); }
  deleteJob(namespace: string, id: string): void { this.jobs.delete(`${namespace}/${id}`); }
}

/** Records everything a scheduler asked for and applies plans to the state. */
export class SchedulerHarness implements Planner {
  readonly state = new InMemoryState();
  readonly plans: Plan[] = [];
  readonly evalUpdates: Evaluation[] = [];
  readonly createdEvals: Evaluation[] = [];
  readonly reblockedEvals: Evaluation[] = [];
  /** Node IDs whose placements the next plan drops (once each). */
  readonly rejectNodeOnce = new Set<string>();
  now = 1_700_000_000_000;
  private seed = 42;
  private ids = 0;

  /** A seeded linear-congruential random source, so runs repeat. */
  random = (): number => {
    this.seed = (this.seed * 1103515245 + 12345) % 2147483648;
    return this.seed / 2147483648;
  };

  context(): SchedulerContext {
    return { now: this.now, random: this.random, newId: () => `id-${String(++this.ids).padStart(6, '0')}` };
  }

  /** Runs the scheduler for the eval's type over the current state. */
  async process(evaluation: Evaluation): Promise<void> {
    const factory = schedulerFactoryFor(evaluation.Type);
    if (!factory) throw new Error(`no scheduler for ${evaluation.Type}`);
    this.state.evals.set(evaluation.ID, evaluation);
    await factory(this.state, this, this.context()).process(evaluation);
  }

  async submitPlan(plan: Plan): Promise<{ result: PlanResult; newState: SchedulerState | null }> {
    this.plans.push(plan);
    const index = this.state.bump();
    const result: PlanResult = {
      NodeUpdate: {}, NodeAllocation: {}, NodePreemptions: {}, Deployment: null, DeploymentUpdates: [], RefreshIndex: 0, AllocIndex: index,
    };
    if (plan.Deployment) this.state.upsertDeployment(plan.Deployment);
    for (const u of plan.DeploymentUpdates) {
      const d = this.state.deployments.get(u.DeploymentID);
      if (d) this.state.upsertDeployment({ ...d, Status: u.Status, StatusDescription: u.StatusDescription });
    }
    for (const [nodeId, list] of Object.entries(plan.NodeUpdate)) {
      result.NodeUpdate[nodeId] = list;
      for (const a of list) this.state.upsertAlloc({ ...a });
    }
    for (const [nodeId, list] of Object.entries(plan.NodeAllocation)) {
      if (this.rejectNodeOnce.delete(nodeId)) {
        result.RefreshIndex = index;
        continue;
      }
      result.NodeAllocation[nodeId] = list;
      for (const a of list) {
        const prev = this.state.allocs.get(a.ID);
        this.state.upsertAlloc({ ...a, CreateIndex: prev?.CreateIndex ?? index });
        if (a.PreviousAllocation) {
          const p = this.state.allocs.get(a.PreviousAllocation);
          if (p && p.NextAllocation === '') this.state.upsertAlloc({ ...p, NextAllocation: a.ID });
        }
      }
    }
    return { result, newState: result.RefreshIndex > 0 ? this.state : null };
  }

  async updateEval(evaluation: Evaluation): Promise<void> {
    this.evalUpdates.push(evaluation);
    this.state.evals.set(evaluation.ID, evaluation);
  }

  async createEval(evaluation: Evaluation): Promise<void> {
    this.createdEvals.push(evaluation);
    this.state.evals.set(evaluation.ID, evaluation);
  }

  async reblockEval(evaluation: Evaluation): Promise<void> {
    this.reblockedEvals.push(evaluation);
    this.state.evals.set(evaluation.ID, evaluation);
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
  return h.state.allocsByJob(namespace, jobId).filter(
    (a) => a.DesiredStatus === 'run' && !['complete', 'failed', 'lost'].includes(a.ClientStatus),
  );
}
