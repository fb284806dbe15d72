/**
 * Which nodes a system job's evaluation must walk. Nomad's system scheduler walks every ready
 * node for every evaluation, the node-update evaluation of one node included: in Go, on other
 * cores than its RPCs. Caravan's scheduler runs on the server's one thread, where that walk is
 * ~0.35–0.7 s of CPU at 10,000 nodes for each node that re-registers or changes status. We depart
 * (docs/system-node-evaluation.md): a node-update evaluation walks only the nodes whose inputs
 * changed since the job's last walk that left nothing undone, and gets the full walk's plan.
 *
 * Why it is the same plan. The walk decides each node from that node, the job's allocations on
 * it and the job alone (the checks that look across nodes — distinct_*, spreads, host volumes —
 * send the evaluation to the full walk). A walk at snapshot index S that failed no placement
 * leaves every node outside its plan and its failed placements settled: there the walk changes nothing.
 * At a later snapshot, a node whose record and whose job allocations are untouched since S
 * (every write stamps ModifyIndex with its log index; removals show as fewer objects created at
 * or before S) is decided exactly as at S — nothing — so the walk can skip it; the nodes of the
 * plan at S, the nodes written since and the evaluation's own node are walked as before. The job
 * itself must not have changed (JobModifyIndex), or every node may need an update.
 *
 * What is remembered is a fact about the log ("at index S, job J was settled but for these
 * nodes"), kept per state store (SchedulerState.nodesVersion's owner) in memory: a new leader,
 * or a store without nodesVersion or restoreIndex, walks in full first. A snapshot restored into
 * the cluster (operator snapshot restore) after S brings back objects with their own older
 * indexes, so a walk remembered from before it is not used.
 */
import type { Evaluation, Job, Node } from '../structs/index.js';
import type { SchedulerState } from './interfaces.js';
import { nodeInJobScope, nodeIsReady } from './feasibility.js';

/** One walk of a job that left every node outside `pending` settled (nothing to change there). */
interface SettledWalk {
  /** The snapshot index the walk read. */
  index: number;
  /** The job's spec version then: a changed spec may change every node's answer. */
  jobModifyIndex: number;
  /** Nodes in the state then (any status), and the job's allocations then: removals since show as fewer. */
  nodeCount: number;
  allocCount: number;
  /**
   * Nodes the walk's plan touched (walked again whether or not the plan was committed) and nodes
   * where a placement failed (walked again, so their failures still count in QueuedAllocations,
   * FailedTGAllocs and the blocked eval as the full walk's would).
   */
  pending: ReadonlySet<string>;
}

/** Jobs remembered per store before the oldest are forgotten (a forgotten job walks in full once). */
const MAX_JOBS_PER_STORE = 4_096;

/** A walk is remembered only when at most 1/MAX_PENDING_SHARE of the nodes are left to look at again. */
const MAX_PENDING_SHARE = 4;

const walksByStore = new WeakMap<object, Map<string, SettledWalk>>();

function jobKey(job: Pick<Job, 'Namespace' | 'ID'>): string {
  return `${job.Namespace}\u0000${job.ID}`;
}

/** Whether one group's placement on a node can depend on other nodes or on objects node writes do not stamp. */
function looksAcrossNodes(job: Job): boolean {
  if ((job.Spreads ?? []).length > 0) return true;
  const distinct = (cs: Job['Constraints']) => (cs ?? []).some((c) => c.Operand === 'distinct_hosts' || c.Operand === 'distinct_property');
  if (distinct(job.Constraints)) return true;
  for (const g of job.TaskGroups) {
    if ((g.Spreads ?? []).length > 0 || distinct(g.Constraints)) return true;
    // Dynamic host volumes have their own table: a volume's state is not a node write.
    if (g.Volumes && Object.keys(g.Volumes).length > 0) return true;
    for (const t of g.Tasks) if (distinct(t.Constraints)) return true;
  }
  return false;
}

/** The nodes a system job's walk considers, and which of them it must look at. */
export interface WalkScope {
  /** Ready nodes in the job's scope, in the state's order (the full walk's candidates). */
  ready: Node[];
  /** Null: walk every node. Otherwise the IDs of the only nodes whose answer can differ from nothing. */
  only: Set<string> | null;
  /** Every node in the state (for remembering this walk). */
  nodeCount: number;
  /** The ready nodes in scope per datacenter (the metrics' NodesAvailable). */
  nodesAvailable: Record<string, number>;
}

/**
 * One pass over the nodes (status, scope and indexes only: no node is checked for feasibility)
 * that lists the candidates and, for a node-update evaluation on a settled job, the nodes to walk.
 */
export function walkScope(ev: Evaluation, state: SchedulerState, job: Job, allocs: readonly { NodeID: string; CreateIndex: number; ModifyIndex: number }[]): WalkScope {
  const base = settledBase(ev, state, job);
  const ready: Node[] = [];
  const only = base ? new Set<string>([ev.NodeID, ...base.pending]) : null;
  const nodesAvailable: Record<string, number> = {};
  let nodeCount = 0;
  let nodesAtBase = 0;
  for (const n of state.nodes()) {
    nodeCount++;
    if (nodeIsReady(n) && nodeInJobScope(job, n)) {
      ready.push(n);
      nodesAvailable[n.Datacenter] = (nodesAvailable[n.Datacenter] ?? 0) + 1;
    }
    if (!base) continue;
    if (n.CreateIndex <= base.index) nodesAtBase++;
    if (n.ModifyIndex > base.index) only!.add(n.ID);
  }
  if (!base || nodesAtBase !== base.nodeCount) return { ready, only: null, nodeCount, nodesAvailable };
  let allocsAtBase = 0;
  for (const a of allocs) {
    if (a.CreateIndex <= base.index) allocsAtBase++;
    if (a.ModifyIndex > base.index) only!.add(a.NodeID);
  }
  if (allocsAtBase !== base.allocCount) return { ready, only: null, nodeCount, nodesAvailable };
  return { ready, only, nodeCount, nodesAvailable };
}

function settledBase(ev: Evaluation, state: SchedulerState, job: Job): SettledWalk | null {
  // Only a node's update names what changed; a job change, a dry run or a blocked eval walks in full.
  if (ev.TriggeredBy !== 'node-update' || !ev.NodeID || ev.AnnotatePlan || job.Stop) return null;
  const owner = state.nodesVersion?.()?.owner;
  if (!owner) return null;
  const base = walksByStore.get(owner)?.get(jobKey(job));
  if (!base || base.index > state.index() || base.jobModifyIndex !== job.JobModifyIndex) return null;
  // A snapshot restored since brought back objects with their older indexes: changes would not show.
  const restored = state.restoreIndex?.();
  if (restored === undefined || base.index < restored) return null;
  return looksAcrossNodes(job) ? null : base;
}

/**
 * Remembers a walk at this snapshot: every node outside `unsettled` (its plan's nodes and those
 * where a placement failed) is settled. A walk restricted by an earlier one counts as a full walk
 * here, since it planned what the full walk would have.
 */
export function rememberSettledWalk(
  ev: Evaluation,
  state: SchedulerState,
  job: Job,
  counts: { nodeCount: number; allocCount: number },
  unsettled: Iterable<string>,
): void {
  if (ev.AnnotatePlan || job.Stop) return;
  const pending = new Set(unsettled);
  // A walk that planned on most nodes (the job's first placement, a job update) is not worth
  // keeping: its plan's writes make the next walk look at those nodes anyway. An older walk
  // remembered stays true.
  if (pending.size > counts.nodeCount / MAX_PENDING_SHARE) return;
  const owner = state.nodesVersion?.()?.owner;
  if (!owner) return;
  let walks = walksByStore.get(owner);
  if (!walks) walksByStore.set(owner, (walks = new Map()));
  const key = jobKey(job);
  const prev = walks.get(key);
  // An older snapshot's walk (a redelivered eval) does not replace a newer one; either is true.
  if (prev && prev.index > state.index()) return;
  walks.delete(key);
  if (walks.size >= MAX_JOBS_PER_STORE) walks.delete(walks.keys().next().value!);
  walks.set(key, {
    index: state.index(),
    jobModifyIndex: job.JobModifyIndex,
    nodeCount: counts.nodeCount,
    allocCount: counts.allocCount,
    pending,
  });
}

/** Forgets what was remembered of a store's jobs (tests comparing a full walk with a restricted one). */
export function forgetSettledWalks(owner: object): void {
  walksByStore.delete(owner);
}
