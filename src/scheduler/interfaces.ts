/**
 * The scheduler's view of the world. A scheduler reads a consistent, read-only snapshot of
 * cluster state through SchedulerState and proposes changes only through a Planner; it does no
 * I/O and keeps no timers, so it is tested with a harness that records plans.
 */
import type { Allocation, Deployment, Evaluation, Job, Node, Plan, PlanResult } from '../structs/index.js';
import type { NodeAllocatedUsage } from '../structs/resource-accounting.js';
import type { SchedulerAlgorithm } from '../structs/scheduler-config.js';
import type { HostVolume } from '../structs/dynamic-host-volume.js';

/** A read-only snapshot of cluster state at one index. Returned objects must not be mutated. */
export interface SchedulerState {
  /** The log index this snapshot reflects. */
  index(): number;
  jobById(namespace: string, id: string): Job | undefined;
  /** Every node, in any status; callers filter for readiness. */
  nodes(): Iterable<Node>;
  nodeById(id: string): Node | undefined;
  allocById(id: string): Allocation | undefined;
  /** Every allocation of a job, all versions and statuses. */
  allocsByJob(namespace: string, jobId: string): Allocation[];
  /** Every allocation on a node, all statuses. */
  allocsByNode(nodeId: string): Allocation[];
  /** The latest deployment of a job, if any. */
  latestDeploymentByJob(namespace: string, jobId: string): Deployment | undefined;
  evalById(id: string): Evaluation | undefined;
  /**
   * Optional fast path: what the live (desired run, not client-terminal) allocations on a node
   * hold, kept incrementally by the store. When absent the scheduler sums allocsByNode itself.
   */
  nodeAllocatedUsage?(nodeId: string): NodeAllocatedUsage;
  /**
   * Optional: the version of the nodes table this snapshot reads — an owner object (the same
   * for every snapshot of one store) and an index that changes whenever any node (or dynamic
   * host volume, whose capabilities the static checks read) changes. The
   * scheduler keeps what it derives from the nodes alone across evaluations of one version
   * (candidate-set.ts); without it, it derives them per evaluation.
   */
  nodesVersion?(): { owner: object; index: number } | undefined;
  /**
   * Optional: the log index of the last snapshot restored into the running cluster (0: none).
   * The objects a restore brings back keep their older indexes, so what the scheduler remembered
   * from before it (settled-walk.ts) no longer holds; without it, nothing is remembered.
   */
  restoreIndex?(): number;
  /** The operator's placement algorithm (binpack when absent): spread prefers the emptiest node. */
  schedulerAlgorithm?(): SchedulerAlgorithm;
  /**
   * Optional: a dynamic host volume by ID, for its state and capabilities. Without it, a node
   * offering a dynamic volume is taken at its word (as before Nomad 1.10's capability checks).
   */
  hostVolumeById?(id: string): HostVolume | undefined;
  /** Whether the operator enabled memory oversubscription (off when absent): without it, `memory_max` is ignored, as Nomad's. */
  memoryOversubscription?(): boolean;
}


/**
 * How a scheduler submits its work. Implemented by the worker (against the leader's plan
 * applier) and by the test harness (recording).
 */
export interface Planner {
  /**
   * Submits a plan. Resolves with what was committed and, when RefreshIndex > 0, a fresher
   * state snapshot to retry against.
   */
  submitPlan(plan: Plan): Promise<{ result: PlanResult; newState: SchedulerState | null }>;
  /** Persists an updated evaluation (status, FailedTGAllocs, QueuedAllocations, …). */
  updateEval(evaluation: Evaluation): Promise<void>;
  /** Creates a follow-up evaluation (delayed reschedule, …). */
  createEval(evaluation: Evaluation): Promise<void>;
  /** Creates or replaces the blocked evaluation of a job that could not place everything. */
  reblockEval(evaluation: Evaluation): Promise<void>;
}

/** Everything a scheduler needs from outside besides state and planner. */
export interface SchedulerContext {
  /** Milliseconds since the epoch: "now" for reschedule and timing decisions. */
  now: number;
  /** Random source in [0,1) for candidate sampling and ties. */
  random: () => number;
  /** Optional source of new IDs (allocations, evaluations); defaults to random UUIDs. */
  newId?: () => string;
  /**
   * The most new allocations one evaluation places (default MAX_PLACEMENTS_PER_PLAN, 2,000):
   * what a job's count asks beyond it is left to a follow-up evaluation, so the memory one
   * evaluation takes does not grow with the count.
   */
  maxPlacementsPerPlan?: number;
  /**
   * How long (ms) the scheduler computes before it lets the event loop serve other work
   * (loop-slice.ts; default DEFAULT_SLICE_MS). 0 yields at every node or placement (tests).
   */
  sliceMs?: number;
}

/** A scheduler processes one evaluation against a snapshot. */
export interface Scheduler {
  process(evaluation: Evaluation): Promise<void>;
}

/** Constructs a scheduler for one evaluation. */
export type SchedulerFactory = (state: SchedulerState, planner: Planner, ctx: SchedulerContext) => Scheduler;
