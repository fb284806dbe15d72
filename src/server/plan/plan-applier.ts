/**
 * The plan applier: plans from every worker are applied one at a time against the latest
 * state. For each node with new allocations the node must still exist, be ready and eligible,
 * and the allocations must fit (cpu, memory, disk, ports) next to what already runs there minus
 * what the plan stops. What fits is committed in one log command; what doesn't is dropped and
 * the worker is told to refresh (RefreshIndex). With AllAtOnce a single misfit drops the plan.
 *
 * The check of a large plan (a system job's 10,000 placements) takes longer than a request
 * should wait, and it runs on the main thread beside every heartbeat and registration, so it
 * gives the event loop back between nodes once its slice is spent (loop-slice.ts). It reads a
 * snapshot taken at its start plus the plans before it in the batch, so what lands meanwhile
 * cannot shift it halfway; before it commits, every accepted node that changed in the live
 * state since the snapshot (drained, marked down, re-registered, allocations written or freed)
 * is checked again against the live state, synchronously, in the turn that issues the commit
 * (after the command's encoding, which yields too), beside the eval token and the applier's
 * closing. Only plans add allocations and they pass here one at a time, so nothing can
 * over-commit a node between that last check and the commit.
 */
import { CaravanError, type CaravanErrorOptions } from '../../structs/caravan-error.js';
import type { Allocation, Node, Plan, PlanResult } from '../../structs/index.js';
import type { ApplyPlanResultsCommand, AllocStopUpdate, Command } from '../fsm/commands.js';
import type { StateStore } from '../state/state-store.js';
import type { StateSnapshot } from '../state/state-snapshot.js';
import type { NodeUsageEntry } from '../state/node-usage-table.js';
import { LoopSlice } from '../../scheduler/loop-slice.js';
import { prepareCommand } from '../fsm/command-codec.js';
import { allocResources, nodeCapacity, nodeReservedPorts } from '../../structs/resource-accounting.js';
import { isServerDecidedClientStatus, isTerminalAlloc } from '../../structs/alloc.js';

/** Plan applier errors; `code` says which. */
export class PlanApplyError extends CaravanError<'BAD_TOKEN' | 'APPLIER_CLOSED' | 'STATE_RESTORED'> {
  constructor(code: 'BAD_TOKEN' | 'APPLIER_CLOSED' | 'STATE_RESTORED', reason: string, options?: CaravanErrorOptions) {
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
  /** How long a plan's check runs before it lets the event loop turn (ms; loop-slice.ts's default; 0 yields after every node). */
  sliceMs?: number;
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
        // in the batch, and their commits share one durable write (group commit). The checks
        // run one after another (a check may yield); the commits are awaited together.
        const batch = this.queue.splice(0);
        const overlay = new BatchOverlay(this.deps.state);
        const inflight: Promise<void>[] = [];
        for (const q of batch) {
          let p: Promise<PlanResult>;
          try {
            p = (await this.applyOne(q.plan, overlay)).done;
          } catch (err) {
            p = Promise.reject(err);
          }
          inflight.push(p.then(q.resolve, q.reject));
        }
        await Promise.all(inflight);
      }
    } finally {
      this.running = false;
    }
  }

  /**
   * Checks a plan and encodes its command (both yielding), then issues its commit; resolves once
   * the commit is issued — so the batch's commits go to the log in the order of their checks —
   * with the commit's outcome (wrapped, so the caller does not wait for it).
   */
  private async applyOne(plan: Plan, overlay: BatchOverlay): Promise<{ done: Promise<PlanResult> }> {
    this.checkPlanToken(plan);
    const { result, rejected, snap } = await this.check(plan, overlay);
    // Copying its placements into a command and packing and writing the entry of 10,000 of them
    // were a turn of 0.1–0.5 s after the check: they yield too.
    const slice = new LoopSlice(this.deps.sliceMs);
    const placed = await copyPlacements(result, slice);
    let cmd = this.commandOf(plan, result, placed);
    if (cmd) await prepareCommand(cmd, this.deps.sliceMs);
    // The turn that issues the commit: nothing from here to deps.commit yields. Whatever landed
    // while the check or the encoding yielded (a node marked down, drained or re-registered
    // smaller, the evaluation handed to another worker, leadership lost) is seen here.
    if (this.closed) throw new PlanApplyError('APPLIER_CLOSED', 'plan applier closed');
    this.checkPlanToken(plan);
    // A restore replaced the state without history: neither the snapshot nor the batch's overlay
    // tells what it changed. The worker plans again against the restored state.
    if (overlay.restoredSince()) throw new PlanApplyError('STATE_RESTORED', 'the state was restored while the plan was checked');
    if (this.recheckChanged(plan, snap, overlay, result, rejected)) {
      if (plan.AllAtOnce) dropAll(result);
      // Rare (a node changed so that it no longer fits): the smaller command is built and encoded at once.
      cmd = this.commandOf(plan, result, Object.values(result.NodeAllocation).flatMap((allocs) => allocs.map(withoutJob)));
    }
    this.lastRejections = rejected;
    const done = this.commitResult(cmd, result, rejected, overlay.lastCommit);
    overlay.lastCommit = done.then(
      () => undefined,
      () => undefined,
    );
    // Recording the plan for the batch yields too: the batch's next check waits for it, and
    // nothing but a plan places. It reads the snapshot, which this plan's commit (perhaps
    // applied meanwhile) cannot be in, so the plan is counted once.
    await overlay.accept(result, slice, snapshotBase(snap));
    return { done };
  }

  private checkPlanToken(plan: Plan): void {
    const { checkToken } = this.deps;
    if (checkToken && plan.EvalToken && !checkToken(plan.EvalID, plan.EvalToken)) {
      throw new PlanApplyError('BAD_TOKEN', `evaluation token does not match for ${plan.EvalID}`);
    }
  }

  /** The log command of what a plan committed (`placed`: its placements, copied); null when it changes nothing. */
  private commandOf(plan: Plan, result: PlanResult, placed: Allocation[]): ApplyPlanResultsCommand | null {
    const stops: AllocStopUpdate[] = [];
    for (const allocs of Object.values(result.NodeUpdate)) for (const a of allocs) stops.push(toStop(a));
    for (const allocs of Object.values(result.NodePreemptions)) {
      for (const a of allocs) stops.push({ ...toStop(a), DesiredStatus: 'evict', DesiredDescription: a.DesiredDescription || 'Preempted' });
    }
    const hasWork = stops.length > 0 || placed.length > 0 || result.Deployment !== null || result.DeploymentUpdates.length > 0;
    if (!hasWork) return null;
    return {
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
  }

  private async commitResult(cmd: ApplyPlanResultsCommand | null, result: PlanResult, rejected: NodeRejection[], previous: Promise<void>): Promise<PlanResult> {
    if (cmd) {
      result.AllocIndex = await this.deps.commit(cmd);
    } else {
      // Refresh past the earlier plans of the batch, whose commits may still be in flight.
      await previous;
    }
    if (rejected.length > 0) result.RefreshIndex = Math.max(this.deps.state.latestIndex(), result.AllocIndex);
    return result;
  }

  /**
   * Decides what of a plan fits the state plus the batch's earlier plans; changes neither. Reads
   * a snapshot while it yields, and the live state for the nodes that changed meanwhile (see the
   * file comment).
   */
  async evaluate(plan: Plan, overlay: BatchOverlay = new BatchOverlay(this.deps.state)): Promise<{ result: PlanResult; rejected: NodeRejection[] }> {
    const { result, rejected } = await this.check(plan, overlay);
    return { result, rejected };
  }

  /** evaluate, answering the snapshot it read too (what changed since must be checked again). */
  private async check(plan: Plan, overlay: BatchOverlay): Promise<{ result: PlanResult; rejected: NodeRejection[]; snap: StateSnapshot }> {
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
    const snap = this.deps.state.snapshot();
    const view = overlay.on(snapshotBase(snap));
    const slice = new LoopSlice(this.deps.sliceMs);
    const nodeIds = new Set([...Object.keys(plan.NodeUpdate), ...Object.keys(plan.NodeAllocation)]);
    for (const nodeId of nodeIds) {
      const placing = plan.NodeAllocation[nodeId] ?? [];
      const reason = placing.length > 0 ? this.nodeRejection(plan, nodeId, placing, view) : null;
      if (reason) {
        rejected.push({ nodeId, reason });
        if (plan.AllAtOnce) break;
        continue;
      }
      if (plan.NodeUpdate[nodeId]?.length) result.NodeUpdate[nodeId] = plan.NodeUpdate[nodeId]!;
      if (placing.length) result.NodeAllocation[nodeId] = placing;
      if (plan.NodePreemptions[nodeId]?.length) result.NodePreemptions[nodeId] = plan.NodePreemptions[nodeId]!;
      const y = slice.maybeYield();
      if (y) await y;
    }
    // Nothing can have changed unless the loop turned.
    if (slice.yields > 0 && !(plan.AllAtOnce && rejected.length > 0)) this.recheckChanged(plan, snap, overlay, result, rejected);
    if (plan.AllAtOnce && rejected.length > 0) dropAll(result);
    return { result, rejected, snap };
  }

  /**
   * Checks again, against the live state, the accepted placements on nodes that changed after
   * the snapshot was taken; drops those that no longer fit. Synchronous: it runs in the turn
   * that issues the commit. True when it dropped any (with AllAtOnce, the caller drops the rest).
   */
  private recheckChanged(plan: Plan, snap: StateSnapshot, overlay: BatchOverlay, result: PlanResult, rejected: NodeRejection[]): boolean {
    const live = overlay.on(liveBase(this.deps.state));
    let dropped = false;
    for (const [nodeId, placing] of Object.entries(result.NodeAllocation)) {
      if (!snap.nodeChangedSinceTaken(nodeId)) continue;
      const reason = this.nodeRejection(plan, nodeId, placing, live);
      if (!reason) continue;
      rejected.push({ nodeId, reason });
      if (plan.AllAtOnce) return true;
      dropped = true;
      delete result.NodeAllocation[nodeId];
      delete result.NodeUpdate[nodeId];
      delete result.NodePreemptions[nodeId];
    }
    return dropped;
  }

  private nodeRejection(plan: Plan, nodeId: string, placing: Allocation[], view: CheckView): string | null {
    const node = view.nodeById(nodeId);
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

/** Empties a result (an AllAtOnce plan with a node that does not fit commits nothing). */
function dropAll(result: PlanResult): void {
  result.NodeUpdate = {};
  result.NodeAllocation = {};
  result.NodePreemptions = {};
  result.Deployment = null;
  result.DeploymentUpdates = [];
}

/** A result's placements as the command carries them (without their job), yielding between nodes. */
async function copyPlacements(result: PlanResult, slice: LoopSlice): Promise<Allocation[]> {
  const placed: Allocation[] = [];
  for (const allocs of Object.values(result.NodeAllocation)) {
    for (const a of allocs) placed.push(withoutJob(a));
    const y = slice.maybeYield();
    if (y) await y;
  }
  return placed;
}

/** A placement as the command carries it (the command has the job once). */
function withoutJob(a: Allocation): Allocation {
  return { ...a, Job: null };
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

/** What a plan's check reads of the cluster: the live state or a snapshot of it. */
interface CheckBase {
  nodeById(id: string): Node | undefined;
  allocById(id: string): Allocation | undefined;
  /** What the node's live allocations hold (do not mutate). */
  usage(nodeId: string): NodeUsageEntry;
}

function liveBase(state: StateStore): CheckBase {
  return {
    nodeById: (id) => state.nodeById(id),
    allocById: (id) => state.allocById(id),
    usage: (nodeId) => state.nodeUsage.get(nodeId),
  };
}

function snapshotBase(snap: StateSnapshot): CheckBase {
  return {
    nodeById: (id) => snap.nodeById(id),
    allocById: (id) => snap.allocById(id),
    usage: (nodeId) => snap.nodeUsageEntry(nodeId),
  };
}

/** A base seen through a batch's overlay: what one check reads. */
interface CheckView {
  nodeById(id: string): Node | undefined;
  allocById(id: string): Allocation | undefined;
  /** An allocation accepted earlier in this batch (a new placement cannot be in the state yet). */
  batchAllocById(id: string): Allocation | undefined;
  usage(nodeId: string): NodeUsageEntry;
}

/**
 * The plans accepted earlier in the same batch (not yet applied): their placements count when
 * later plans of the batch are checked, over the live state or a snapshot (on()). Only plans add
 * allocations, and a batch's plans are all of them until its commits settle, so an overlay entry
 * never undercounts a node's usage (anything else that lands meanwhile frees).
 *
 * What an earlier plan frees (a stop, a preemption, an in-place update's old claim) is not
 * counted as free for the later ones: the batch's commits are issued together, and the earlier
 * one's may fail (its append, or its apply) while a later one's succeeds — which would then
 * over-commit the room it took. A later plan that needs that room is refused with a RefreshIndex
 * and its worker plans again once the earlier commit applied (the live state shows it then).
 * The stopped allocation is recorded as stopped, so later plans do not free it either.
 */
export class BatchOverlay {
  private readonly allocs = new Map<string, Allocation>();
  private readonly usages = new Map<string, NodeUsageEntry>();
  /** Settles when the last commit issued in this batch has settled. */
  lastCommit: Promise<void> = Promise.resolve();
  private readonly restoresAtStart: number;

  constructor(private readonly state: StateStore) {
    this.restoresAtStart = state.restoreCount();
  }

  /** Whether the state was restored (replaced whole) since the batch began. */
  restoredSince(): boolean {
    return this.state.restoreCount() !== this.restoresAtStart;
  }

  /** The batch's plans over `base`. */
  on(base: CheckBase): CheckView {
    return {
      nodeById: (id) => base.nodeById(id),
      allocById: (id) => this.allocs.get(id) ?? base.allocById(id),
      batchAllocById: (id) => this.allocs.get(id),
      usage: (nodeId) => this.usages.get(nodeId) ?? base.usage(nodeId),
    };
  }

  /**
   * Records what a plan committed so later plans in the batch see it, yielding between nodes
   * (nothing reads the overlay until it is done: the batch's next check waits for it).
   */
  async accept(result: PlanResult, slice: LoopSlice = new LoopSlice(Infinity), base: CheckBase = liveBase(this.state)): Promise<void> {
    for (const allocs of [...Object.values(result.NodeUpdate), ...Object.values(result.NodePreemptions)]) {
      for (const a of allocs) {
        const prev = this.allocs.get(a.ID) ?? base.allocById(a.ID);
        if (prev) this.allocs.set(prev.ID, { ...prev, DesiredStatus: 'stop' });
      }
      const y = slice.maybeYield();
      if (y) await y;
    }
    for (const allocs of Object.values(result.NodeAllocation)) {
      for (const a of allocs) {
        if (!isTerminalAlloc(a)) this.add(base, a);
        this.allocs.set(a.ID, a);
      }
      const y = slice.maybeYield();
      if (y) await y;
    }
  }

  /** Counts what a placement holds on its node (the node's entry starts from `base`). */
  private add(base: CheckBase, a: Allocation): void {
    let u = this.usages.get(a.NodeID);
    if (!u) {
      const from = base.usage(a.NodeID);
      u = { totals: { ...from.totals }, ports: new Map(from.ports) };
      this.usages.set(a.NodeID, u);
    }
    const r = allocResources(a);
    u.totals.cpu += r.totals.cpu;
    u.totals.memoryMB += r.totals.memoryMB;
    u.totals.diskMB += r.totals.diskMB;
    for (const p of r.ports) u.ports.set(p, (u.ports.get(p) ?? 0) + 1);
  }
}
