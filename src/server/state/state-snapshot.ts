/**
 * A read-only view of the state store frozen at one index, for the scheduler (implements
 * SchedulerState) and for dry-run plans. Creating one is O(1); see cow-table.ts.
 */
import type { Allocation, Deployment, Evaluation, Job, Node } from '../../structs/index.js';
import type { SchedulerState } from '../../scheduler/interfaces.js';
import type { NodeAllocatedUsage } from '../../structs/resource-accounting.js';
import type { CowIndex, CowTable, Epoch } from './cow-table.js';
import type { NodeUsageEntry, NodeUsageTable } from './node-usage-table.js';
import type { HostVolumeTable } from './host-volume-table.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';

/**
 * The copy-on-write tables and indexes a snapshot reads at its epoch. The state store provides
 * them; naming them here (not the store) keeps the store → snapshot dependency one-way.
 */
export interface SnapshotTables {
  readonly jobsT: CowTable<string, Job>;
  readonly allocsT: CowTable<string, Allocation>;
  readonly evalsT: CowTable<string, Evaluation>;
  readonly nodesT: CowTable<string, Node>;
  readonly deploymentsT: CowTable<string, Deployment>;
  readonly allocsByNodeI: CowIndex;
  readonly allocsByJobI: CowIndex;
  readonly deploymentsByJobI: CowIndex;
  readonly nodeUsage: NodeUsageTable;
  readonly hostVolumeTable: HostVolumeTable;
}
import type { SchedulerAlgorithm, SchedulerConfiguration } from '../../structs/scheduler-config.js';

/** The state as it was when the snapshot was taken; later writes are invisible. */
export class StateSnapshot implements SchedulerState {
  constructor(
    private readonly store: SnapshotTables,
    private readonly epoch: Epoch,
    private readonly atIndex: number,
    private readonly schedulerConf?: SchedulerConfiguration,
    /** The nodes (and host volumes) tables' index when the snapshot was taken (-1: unknown, no nodesVersion). */
    private readonly nodesIndex = -1,
    /** The log index of the last snapshot restored into the running cluster (0: none). */
    private readonly restoredAt = 0,
  ) {}

  restoreIndex(): number {
    return this.restoredAt;
  }

  nodesVersion(): { owner: object; index: number } | undefined {
    return this.nodesIndex < 0 ? undefined : { owner: this.store.nodesT, index: this.nodesIndex };
  }

  schedulerAlgorithm(): SchedulerAlgorithm {
    return this.schedulerConf?.SchedulerAlgorithm ?? 'binpack';
  }

  memoryOversubscription(): boolean {
    return this.schedulerConf?.MemoryOversubscriptionEnabled ?? false;
  }

  index(): number {
    return this.atIndex;
  }

  jobById(namespace: string, id: string): Job | undefined {
    return this.store.jobsT.getAt(this.epoch, `${namespace}\u0000${id}`);
  }

  nodes(): Iterable<Node> {
    return this.store.nodesT.valuesAt(this.epoch);
  }

  nodeById(id: string): Node | undefined {
    return this.store.nodesT.getAt(this.epoch, id);
  }

  allocById(id: string): Allocation | undefined {
    return this.store.allocsT.getAt(this.epoch, id);
  }

  allocsByJob(namespace: string, jobId: string): Allocation[] {
    return this.resolveAllocs(this.store.allocsByJobI.getAt(this.epoch, `${namespace}\u0000${jobId}`));
  }

  allocsByNode(nodeId: string): Allocation[] {
    return this.resolveAllocs(this.store.allocsByNodeI.getAt(this.epoch, nodeId));
  }

  latestDeploymentByJob(namespace: string, jobId: string): Deployment | undefined {
    let best: Deployment | undefined;
    for (const id of this.store.deploymentsByJobI.getAt(this.epoch, `${namespace}\u0000${jobId}`)) {
      const d = this.store.deploymentsT.getAt(this.epoch, id);
      if (d && (!best || d.CreateIndex > best.CreateIndex)) best = d;
    }
    return best;
  }

  /** What the node's live allocations hold as of this snapshot (kept incrementally by the store). */
  nodeAllocatedUsage(nodeId: string): NodeAllocatedUsage {
    return this.store.nodeUsage.getAt(this.epoch, nodeId);
  }

  /** What the node's live allocations hold as of this snapshot, with port holder counts (the plan applier's check). */
  nodeUsageEntry(nodeId: string): NodeUsageEntry {
    return this.store.nodeUsage.entryAt(this.epoch, nodeId);
  }

  /**
   * Whether the node or what its allocations hold is different in the live state now: what a
   * plan checked against this snapshot must check again before it commits. Identity, so O(1).
   */
  nodeChangedSinceTaken(nodeId: string): boolean {
    return this.store.nodesT.getAt(this.epoch, nodeId) !== this.store.nodesT.get(nodeId) || this.store.nodeUsage.changedSince(this.epoch, nodeId);
  }

  evalById(id: string): Evaluation | undefined {
    return this.store.evalsT.getAt(this.epoch, id);
  }

  hostVolumeById(id: string): HostVolume | undefined {
    return this.store.hostVolumeTable.getAt(this.epoch, id);
  }

  private resolveAllocs(ids: ReadonlySet<string>): Allocation[] {
    const out: Allocation[] = [];
    for (const id of ids) {
      const a = this.store.allocsT.getAt(this.epoch, id);
      if (a) out.push(a);
    }
    return out;
  }
}
