/**
 * The plan applier: plans from every worker are applied one at a time against the latest
 * state. For each node with new allocations the node must still exist, be ready and eligible,
 * and the allocations must fit (cpu, memory, disk, ports) next to what already runs there minus
 * what the plan stops. What fits is committed in one log command; what doesn't is dropped and
 * the worker is told to refresh (RefreshIndex). With AllAtOnce a single misfit drops the plan.
 */
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';
import type { Allocation, Plan, PlanResult } from '../../structs/index.js';
import type { ApplyPlanResultsCommand, AllocStopUpdate, Command } from '../fsm/commands.js';
import type { StateStore } from '../state/state-store.js';
import type { NodeUsageEntry } from '../state/node-usage-table.js';
import { allocResources, nodeCapacity, nodeReservedPorts } from '../../structs/resource-accounting.js';
import { isServerDecidedClientStatus, isTerminalAlloc } from '../../structs/alloc.js';

/** Plan applier errors; `code` says which. */
export class PlanApplyError extends CaravanError<'BAD_TOKEN' | 'APPLIER_CLOSED'> {
  constructor(code: 'BAD_TOKEN' | 'APPLIER_CLOSED', reason: string, options?: CaravanErrorOptions) {
    super(code, { reason }, options);
    this.name = 'PlanApplyError';
  }
}

export interface PlanApplierDeps {
  state: StateStore;
  /** Appends a command durably and applies it; resolves with its index. */
  commit: (cmd: Command) => Promise<number>;
  /** Unix nanoseconds "now" to stamp the command with. */
  nowNanos: () => number;
  /** Whether the plan's eval token is the outstanding one (Nomad rejects stale workers). */
  checkToken?: (evalId: string, token: string) => boolean;
}

/** Why a node was rejected, for logs and tests. */
export interface NodeRejection {
  nodeId: string;
  reason: string;
}

interface Queued {
  plan: Plan;
  resolve: (r: PlanResult) => void;
  reject: (e: unknown) => void;
}

/** Serializes and applies plans; see the file comment. */
export class PlanApplier {
  private queue: Queued[] = [];
  private running = false;
  private closed = false;
  /** The rejections of the last plan (diagnostics). */
  lastRejections: NodeRejection[] = [];

  constructor(private readonly deps: PlanApplierDeps) {}

  /** Queues a plan; resolves with what was committed once it is durable and applied. */
  submit(plan: Plan): Promise<PlanResult> {
    if (this.closed) return Promise.reject(new PlanApplyError('APPLIER_CLOSED', 'plan applier closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ plan, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /** Rejects queued plans and refuses new ones. */
  close(): void {
    this.closed = true;
    for (const q of this.queue.splice(0)) q.reject(new PlanApplyError('APPLIER_CLOSED', 'plan applier closed'));
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        // Take every queued plan: each is checked against the state plus the plans before it
        // in the batch, and their commits share one durable write (group commit).
        const batch = this.queue.splice(0);
        const overlay = new BatchOverlay(this.deps.state);
        const inflight = batch.map((q) => {
          let p: Promise<PlanResult>;
          try {
            p = this.applyOne(q.plan, overlay);
          } catch (err) {
            p = Promise.reject(err);
          }
          return p.then(q.resolve, q.reject);
        });
        await Promise.all(inflight);
      }
    } finally {
      this.running = false;
    }
  }

  /** Decides synchronously (so batch order holds), then commits. */
  private applyOne(plan: Plan, overlay: BatchOverlay): Promise<PlanResult> {
    const { checkToken } = this.deps;
    if (checkToken && plan.EvalToken && !checkToken(plan.EvalID, plan.EvalToken)) {
      throw new PlanApplyError('BAD_TOKEN', `evaluation token does not match for ${plan.EvalID}`);
    }
    const { result, rejected } = this.evaluate(plan, overlay);
    overlay.accept(result);
    const done = this.commitResult(plan, result, rejected, overlay.lastCommit);
    overlay.lastCommit = done.then(
      () => undefined,
      () => undefined,
    );
    return done;
  }

  private async commitResult(plan: Plan, result: PlanResult, rejected: NodeRejection[], previous: Promise<void>): Promise<PlanResult> {
    this.lastRejections = rejected;
    const stops: AllocStopUpdate[] = [];
    for (const allocs of Object.values(result.NodeUpdate)) for (const a of allocs) stops.push(toStop(a));
    for (const allocs of Object.values(result.NodePreemptions)) {
      for (const a of allocs) stops.push({ ...toStop(a), DesiredStatus: 'evict', DesiredDescription: a.DesiredDescription || 'Preempted' });
    }
    const placed: Allocation[] = [];
    for (const allocs of Object.values(result.NodeAllocation)) for (const a of allocs) placed.push({ ...a, Job: null });
    const hasWork = stops.length > 0 || placed.length > 0 || result.Deployment !== null || result.DeploymentUpdates.length > 0;
    if (hasWork) {
      const cmd: ApplyPlanResultsCommand = {
        Type: 'ApplyPlanResults',
        EvalID: plan.EvalID,
        Job: plan.Job,
        AllocsUpdated: placed,
        AllocsStopped: stops,
        Deployment: result.Deployment,
        DeploymentUpdates: result.DeploymentUpdates,
        Evals: [],
        Now: this.deps.nowNanos(),
      };
      result.AllocIndex = await this.deps.commit(cmd);
    } else {
      // Refresh past the earlier plans of the batch, whose commits may still be in flight.
      await previous;
    }
    if (rejected.length > 0) result.RefreshIndex = Math.max(this.deps.state.latestIndex(), result.AllocIndex);
    return result;
  }

  /** Decides what of a plan fits the latest state; pure with respect to the store. */
  evaluate(plan: Plan, overlay: BatchOverlay = new BatchOverlay(this.deps.state)): { result: PlanResult; rejected: NodeRejection[] } {
    const result: PlanResult = {
      NodeUpdate: {},
      NodeAllocation: {},
      NodePreemptions: {},
      Deployment: plan.Deployment,
      DeploymentUpdates: plan.DeploymentUpdates,
      RefreshIndex: 0,
      AllocIndex: 0,
    };
    const rejected: NodeRejection[] = [];
    const nodeIds = new Set([...Object.keys(plan.NodeUpdate), ...Object.keys(plan.NodeAllocation)]);
    for (const nodeId of nodeIds) {
      const placing = plan.NodeAllocation[nodeId] ?? [];
      const reason = placing.length > 0 ? this.nodeRejection(plan, nodeId, placing, overlay) : null;
      if (reason) {
        rejected.push({ nodeId, reason });
        if (plan.AllAtOnce) break;
        continue;
      }
      if (plan.NodeUpdate[nodeId]?.length) result.NodeUpdate[nodeId] = plan.NodeUpdate[nodeId]!;
      if (placing.length) result.NodeAllocation[nodeId] = placing;
      if (plan.NodePreemptions[nodeId]?.length) result.NodePreemptions[nodeId] = plan.NodePreemptions[nodeId]!;
    }
    if (plan.AllAtOnce && rejected.length > 0) {
      result.NodeUpdate = {};
      result.NodeAllocation = {};
      result.NodePreemptions = {};
      result.Deployment = null;
      result.DeploymentUpdates = [];
    }
    return { result, rejected };
  }

  private nodeRejection(plan: Plan, nodeId: string, placing: Allocation[], view: BatchOverlay): string | null {
    const node = this.deps.state.nodeById(nodeId);
    if (!node) return 'node does not exist';
    // An allocation the scheduler creates has CreateIndex 0 until the FSM stores it, so only
    // updates of stored ones are looked up (the allocation table is large: a lookup per new
    // placement is measurable at a million).
    const existing = placing.map((a) => (a.CreateIndex === 0 ? view.batchAllocById(a.ID) : view.allocById(a.ID)));
    const anyNew = existing.some((a) => !a);
    if (anyNew) {
      if (node.Status !== 'ready') return `node is ${node.Status}`;
      if (node.SchedulingEligibility !== 'eligible') return 'node is not eligible';
      if (node.DrainStrategy) return 'node is draining';
    }
    const cap = nodeCapacity(node);
    const reservedPorts = nodeReservedPorts(node);
    const usage = view.usage(nodeId);
    const totals = { ...usage.totals };
    const freedPorts = new Map<number, number>();
    const release = (a: Allocation | undefined): void => {
      if (!a || a.NodeID !== nodeId || isTerminalAlloc(a)) return;
      const r = allocResources(a);
      totals.cpu -= r.totals.cpu;
      totals.memoryMB -= r.totals.memoryMB;
      totals.diskMB -= r.totals.diskMB;
      for (const p of r.ports) freedPorts.set(p, (freedPorts.get(p) ?? 0) + 1);
    };
    const released = new Set<string>();
    for (const a of [...(plan.NodeUpdate[nodeId] ?? []), ...(plan.NodePreemptions[nodeId] ?? [])]) {
      if (released.has(a.ID)) continue;
      released.add(a.ID);
      release(view.allocById(a.ID));
    }
    const newPorts = new Set<number>();
    for (let i = 0; i < placing.length; i++) {
      const a = placing[i]!;
      // An in-place update replaces the existing allocation's claim.
      if (!released.has(a.ID)) {
        released.add(a.ID);
        release(existing[i]);
      }
      const r = allocResources(a);
      totals.cpu += r.totals.cpu;
      totals.memoryMB += r.totals.memoryMB;
      totals.diskMB += r.totals.diskMB;
      for (const p of r.ports) {
        if (newPorts.has(p) || reservedPorts.has(p)) return `port ${p} already in use`;
        const held = (usage.ports.get(p) ?? 0) - (freedPorts.get(p) ?? 0);
        if (held > 0) return `port ${p} already in use`;
        newPorts.add(p);
      }
    }
    if (totals.cpu > cap.cpu) return 'cpu exhausted';
    if (totals.memoryMB > cap.memory) return 'memory exhausted';
    if (totals.diskMB > cap.disk) return 'disk exhausted';
    return null;
  }
}

function toStop(a: Allocation): AllocStopUpdate {
  return {
    ID: a.ID,
    DesiredStatus: a.DesiredStatus === 'run' ? 'stop' : a.DesiredStatus,
    DesiredDescription: a.DesiredDescription,
    // Only server-decided client statuses travel; the client owns the others.
    ClientStatus: isServerDecidedClientStatus(a.ClientStatus) ? a.ClientStatus : '',
    FollowupEvalID: a.FollowupEvalID,
  };
}

/**
 * The latest state plus the plans accepted earlier in the same batch (not yet applied): their
 * placements and stops count when later plans of the batch are checked.
 */
export class BatchOverlay {
  private readonly allocs = new Map<string, Allocation>();
  private readonly usages = new Map<string, NodeUsageEntry>();
  /** Settles when the last commit issued in this batch has settled. */
  lastCommit: Promise<void> = Promise.resolve();

  constructor(private readonly state: StateStore) {}

  allocById(id: string): Allocation | undefined {
    return this.allocs.get(id) ?? this.state.allocById(id);
  }

  /** An allocation accepted earlier in this batch (a new placement cannot be in the state yet). */
  batchAllocById(id: string): Allocation | undefined {
    return this.allocs.get(id);
  }

  usage(nodeId: string): NodeUsageEntry {
    return this.usages.get(nodeId) ?? this.state.nodeUsage.get(nodeId);
  }

  /** Records what a plan committed so later plans in the batch see it. */
  accept(result: PlanResult): void {
    for (const allocs of [...Object.values(result.NodeUpdate), ...Object.values(result.NodePreemptions)]) {
      for (const a of allocs) {
        const prev = this.allocById(a.ID);
        if (!prev) continue;
        this.replace(prev, { ...prev, DesiredStatus: 'stop' });
      }
    }
    for (const allocs of Object.values(result.NodeAllocation)) {
      for (const a of allocs) this.replace(a.CreateIndex === 0 ? this.batchAllocById(a.ID) : this.allocById(a.ID), a);
    }
  }

  private replace(prev: Allocation | undefined, next: Allocation): void {
    if (prev && !isTerminalAlloc(prev)) this.adjust(prev, -1);
    if (!isTerminalAlloc(next)) this.adjust(next, 1);
    this.allocs.set(next.ID, next);
  }

  private adjust(a: Allocation, sign: 1 | -1): void {
    let u = this.usages.get(a.NodeID);
    if (!u) {
      const base = this.state.nodeUsage.get(a.NodeID);
      u = { totals: { ...base.totals }, ports: new Map(base.ports) };
      this.usages.set(a.NodeID, u);
    }
    const r = allocResources(a);
    u.totals.cpu += sign * r.totals.cpu;
    u.totals.memoryMB += sign * r.totals.memoryMB;
    u.totals.diskMB += sign * r.totals.diskMB;
    for (const p of r.ports) {
      const n = (u.ports.get(p) ?? 0) + sign;
      if (n <= 0) u.ports.delete(p);
      else u.ports.set(p, n);
    }
  }
}
