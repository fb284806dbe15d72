/**
 * One pass of the node drainer, as a pure function of the state and `now`: which allocations
 * to mark for migration and which drains are complete. Nomad's drainer behaviour:
 *
 *   draining node ──► service allocs: per task group, at most migrate.max_parallel at a time —
 *                     a batch is marked only while (healthy allocs − (count − max_parallel)) > 0,
 *                     so the next batch waits for the replacements of the last to be running
 *                 ──► batch allocs: left to finish; migrated only at the deadline
 *                 ──► system allocs: migrated last, once nothing else remains on the node
 *                     (never with IgnoreSystemJobs)
 *                 ──► deadline passed (or Deadline < 0, "force"): everything left is migrated
 *                 ──► no allocation left running (system ones aside with IgnoreSystemJobs):
 *                     drain complete
 *
 * An allocation already marked (DesiredTransition.Migrate) is neither marked again nor counted
 * as healthy: it is on its way out.
 */
import type { Allocation, Job, Node, TaskGroup } from '../../structs/index.js';
import { isTerminalClientStatus } from '../../structs/index.js';
import type { StateReader } from '../state/state-reader.js';

/** What one pass decided. */
export interface DrainPlan {
  /** Allocations to mark DesiredTransition.Migrate, with the job each belongs to. */
  migrate: { alloc: Allocation; job: Job | null }[];
  /** Draining nodes with nothing left to move. */
  complete: Node[];
}

/** When a drain is forced: Deadline < 0 at once, Deadline 0 never, otherwise at ForceDeadline. */
export function drainForced(node: Node, nowMs: number): boolean {
  const d = node.DrainStrategy;
  if (!d) return false;
  if (d.Deadline < 0) return true;
  if (d.Deadline === 0) return false;
  const at = Date.parse(d.ForceDeadline);
  return Number.isFinite(at) && at > 0 && nowMs >= at;
}

/** The time (ms) a drain will be forced, or null when it never will (or already is). */
export function drainForceAt(node: Node): number | null {
  const d = node.DrainStrategy;
  if (!d || d.Deadline <= 0) return null;
  const at = Date.parse(d.ForceDeadline);
  return Number.isFinite(at) ? at : null;
}

/** True while an allocation still holds its place (Nomad's !TerminalStatus()). */
function isLive(a: Allocation): boolean {
  return a.DesiredStatus === 'run' && !isTerminalClientStatus(a.ClientStatus);
}

function isSystemJob(job: Job | null, a: Allocation): boolean {
  const t = job?.Type ?? a.Job?.Type;
  return t === 'system' || t === 'sysbatch';
}

function isBatchJob(job: Job | null, a: Allocation): boolean {
  return (job?.Type ?? a.Job?.Type) === 'batch';
}

/** Counts as healthy for migration: running, not on its way out, not reported unhealthy. */
function isHealthy(a: Allocation): boolean {
  return isLive(a) && a.ClientStatus === 'running' && a.DesiredTransition.Migrate !== true && a.DeploymentStatus?.Healthy !== false;
}

/**
 * What a pass reads: the draining nodes (kept by the state store as nodes are written, so an idle
 * pass reads no node at all), their allocations and their jobs.
 */
export type DrainState = Pick<StateReader, 'jobById' | 'allocsByNode' | 'allocsByJob' | 'nodeById'> & {
  /** The nodes with a DrainStrategy, by ID. */
  drainingNodes(): Node[];
};

/** Computes one pass of the drainer (see the file comment). */
export function planDrain(state: DrainState, nowMs: number): DrainPlan {
  const plan: DrainPlan = { migrate: [], complete: [] };
  const draining = new Map<string, Node>();
  for (const n of state.drainingNodes()) if (n.DrainStrategy) draining.set(n.ID, n);
  if (draining.size === 0) return plan;

  const jobOf = (a: Allocation): Job | null => state.jobById(a.Namespace, a.JobID) ?? a.Job ?? null;
  const marked = new Set<string>();
  const mark = (a: Allocation, job: Job | null) => {
    if (marked.has(a.ID)) return;
    marked.add(a.ID);
    plan.migrate.push({ alloc: a, job });
  };
  // Service groups with allocations on draining nodes, handled once each across all nodes.
  const groups = new Map<string, { job: Job | null; namespace: string; jobId: string; group: string }>();

  for (const node of draining.values()) {
    const forced = drainForced(node, nowMs);
    const ignoreSystem = node.DrainStrategy?.IgnoreSystemJobs === true;
    const live = state.allocsByNode(node.ID).filter(isLive);
    const pending = live.filter((a) => a.DesiredTransition.Migrate !== true);
    let nonSystemLeft = 0;
    for (const a of live) if (!isSystemJob(jobOf(a), a)) nonSystemLeft++;

    for (const a of pending) {
      const job = jobOf(a);
      if (isSystemJob(job, a)) {
        if (ignoreSystem) continue;
        if (forced || nonSystemLeft === 0) mark(a, job);
      } else if (forced) {
        mark(a, job);
      } else if (!isBatchJob(job, a)) {
        groups.set(`${a.Namespace}\u0000${a.JobID}\u0000${a.TaskGroup}`, { job, namespace: a.Namespace, jobId: a.JobID, group: a.TaskGroup });
      }
    }
    const remaining = live.filter((a) => !(ignoreSystem && isSystemJob(jobOf(a), a)));
    if (remaining.length === 0) plan.complete.push(node);
  }

  for (const g of groups.values()) {
    const all = state.allocsByJob(g.namespace, g.jobId).filter((a) => a.TaskGroup === g.group);
    const candidates = all.filter((a) => isLive(a) && a.DesiredTransition.Migrate !== true && draining.has(a.NodeID) && !marked.has(a.ID));
    const tg: TaskGroup | undefined = g.job?.TaskGroups.find((t) => t.Name === g.group);
    let budget: number;
    if (!g.job || g.job.Stop || !tg) {
      // Nothing will replace them: there is no availability to protect.
      budget = candidates.length;
    } else {
      const maxParallel = Math.max(1, tg.Migrate?.MaxParallel ?? 1);
      const healthy = all.filter(isHealthy).length;
      budget = healthy - (tg.Count - maxParallel);
    }
    for (const a of candidates.slice(0, Math.max(0, budget))) mark(a, g.job);
  }
  return plan;
}
