/**
 * The in-memory state store: tables of jobs (with versions and summaries), allocations,
 * evaluations, nodes and deployments, with secondary indexes, per-table indexes, change
 * notification for blocking queries, and O(1) snapshots for the scheduler. Only the FSM
 * writes; every write takes the log index it happens at.
 */
import { implicitNamespaces, type SerializedState } from './serialized-state.js';
import { byPrefix, lookup } from './table-lookups.js';
import { NodeTableIndexes } from './node-table-indexes.js';
import { JobScalingEvents } from './job-scaling-events.js';
import { NodePools } from './node-pools.js';
import { VariableTable } from './variable-table.js';
import { HostVolumeTable } from './host-volume-table.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import { ServiceRegistrationTable } from './service-registration-table.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { Variable } from '../../structs/variable.js';
import type { NodePool } from '../../structs/node-pool.js';
import type { JobVersionTag } from '../../structs/job.js';
import { JobSubmissions } from './job-submissions.js';
import { NamespaceTable } from './namespace-table.js';
import type { Namespace } from '../../structs/namespace.js';
import { AclTables } from './acl-tables.js';
import { defaultSchedulerConfig, type SchedulerConfiguration } from '../../structs/scheduler-config.js';
import { defaultAutopilotConfig, type AutopilotConfig, type AutopilotConfigFields } from '../../structs/autopilot-config.js';
import type { Allocation, Deployment, Evaluation, Job, JobSummary, Node } from '../../structs/index.js';
import {
  JOB_TABLE_PREFIX,
  NODE_TABLE_PREFIX,
  SERVICE_TABLE_PREFIX,
  Table,
  jobAllocsTableKey,
  jobRowsTableKey,
  nodeAllocsTableKey,
  nodeHostVolumesTableKey,
  nodeTableKey,
  type StateReader,
} from './state-reader.js';
import { OBJECT_TABLE_PREFIX, WatchedObjects, objectTableIndex, objectTableKey, type ObjectTable } from './object-tables.js';
import { ChangeWaiters, type ChangeWaiter } from './change-waiters.js';
import { CowIndex, CowTable, EpochClock } from './cow-table.js';
import { JobLiveness } from './job-liveness.js';
import { computeJobStatus, emptyTgSummary, summaryForJob, summaryWithAlloc } from './job-status.js';
import { isTerminalAlloc, isTerminalClientStatus } from '../../structs/alloc.js';
import { childrenSummary, sameChildren } from '../dispatch/children-summary.js';
import { NodeUsageTable } from './node-usage-table.js';
import { MetricCompactor } from './compact-metric.js';
import { StateSnapshot, type SnapshotTables } from './state-snapshot.js';
import { systemClock, type Clock } from '../../time/clock.js';

/** How many versions of a job are kept, as Nomad does. */
export const JOB_VERSIONS_KEPT = 6;

/** The key of a job in the tables: namespace and ID. */
export function jobKey(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

/** The state store; reads implement StateReader, writes are for the FSM only. */
export class StateStore implements StateReader, SnapshotTables {
  readonly epochs = new EpochClock();
  readonly jobsT = new CowTable<string, Job>('jobs', this.epochs);
  readonly jobVersionsT = new CowTable<string, Job[]>('job_versions', this.epochs);
  private schedulerConf: SchedulerConfiguration = defaultSchedulerConfig();
  private autopilotConf: AutopilotConfig = defaultAutopilotConfig();
  /** Job sources per version (GET /v1/job/:id/submission); written by the FSM only. */
  readonly submissions = new JobSubmissions();
  /** Scaling events per job and group; written by the FSM only. */
  readonly scalingEvents = new JobScalingEvents();
  /** The namespaces (default always there); written by the FSM only (namespace-fsm.ts). */
  readonly namespaceTable = new NamespaceTable();
  /** ACL tokens, policies and roles; written by the FSM only. */
  readonly acl = new AclTables();
  /** Node pools; written by the FSM only. */
  readonly pools = new NodePools();
  /** Variables; written by the FSM only (variable-fsm.ts). */
  readonly variableTable = new VariableTable();
  /** Service registrations (provider "nomad"); written by the FSM only (service-registration-fsm.ts). */
  readonly serviceTable = new ServiceRegistrationTable(this.epochs);
  /** Dynamic host volumes; written by the FSM only (host-volume-fsm.ts). */
  readonly hostVolumeTable = new HostVolumeTable(this.epochs);
  readonly summariesT = new CowTable<string, JobSummary>('job_summary', this.epochs);
  readonly allocsT = new CowTable<string, Allocation>('allocs', this.epochs);
  readonly evalsT = new CowTable<string, Evaluation>('evals', this.epochs);
  readonly nodesT = new CowTable<string, Node>('nodes', this.epochs);
  readonly deploymentsT = new CowTable<string, Deployment>('deployment', this.epochs);
  readonly allocsByNodeI = new CowIndex('idx_allocs_node', this.epochs);
  readonly allocsByJobI = new CowIndex('idx_allocs_job', this.epochs);
  readonly evalsByJobI = new CowIndex('idx_evals_job', this.epochs);
  readonly deploymentsByJobI = new CowIndex('idx_deploy_job', this.epochs);
  /** Each job's live allocations and evaluations: its status without reading all of them. */
  private readonly liveness = new JobLiveness(this.epochs);

  /** @param clock times the waits of blocking queries (the server's clock; fake in tests). */
  constructor(private readonly clock: Clock = systemClock) {}

  /** Resources held on each node by non-terminal allocations (latest state only). */
  readonly nodeUsage = new NodeUsageTable(this.epochs);

  private index = 0;
  private readonly tableIdx = new Map<Table, number>();
  private readonly waiters = new ChangeWaiters((t) => (t.startsWith(SERVICE_TABLE_PREFIX) ? Table.Services : t));
  /** The objects blocked readers wait on (touchObject files only those). */
  private readonly watchedObjects = new WatchedObjects();
  /** Tables and per-node pseudo-tables touched by the apply in progress: whose waiters it may wake. */
  private readonly touched = new Set<string>();
  /** Set by a snapshot restore: every waiter's tables moved. */
  private wakeAll = false;
  /** Per-node and per-job pseudo-table indexes; one not written since the store was loaded answers from its objects (pseudoFallback). */
  private readonly nodeTables = new NodeTableIndexes();
  private readonly touchedJobs = new Set<string>();
  /** Parents (periodic/parameterized) whose children changed in this apply. */
  private readonly touchedParents = new Set<string>();
  /** Registrations removed in this apply, for the FSM's ServiceDeregistration events. */
  private removedServices: ServiceRegistration[] = [];

  // ---- reads (StateReader) ----

  latestIndex(): number {
    return this.index;
  }

  tableIndex(table: Table): number {
    if (table.startsWith(OBJECT_TABLE_PREFIX)) return objectTableIndex(this, table);
    if (table.startsWith(NODE_TABLE_PREFIX) || table.startsWith(JOB_TABLE_PREFIX)) return this.nodeTables.get(table) ?? this.pseudoFallback(table);
    const i = this.tableIdx.get(table);
    if (i !== undefined || !table.startsWith(SERVICE_TABLE_PREFIX)) return i ?? 0;
    // A per-service pseudo-table (serviceTableKey): the service's own index.
    const key = table.slice(SERVICE_TABLE_PREFIX.length);
    const sep = key.indexOf('\u0000');
    return this.serviceTable.serviceIndex(key.slice(0, sep), key.slice(sep + 1));
  }

  /**
   * A per-node or per-job pseudo-table not written since the store was loaded: the highest
   * ModifyIndex of what it covers (at least the last restore's index), never above any index a
   * later write gives it.
   */
  private pseudoFallback(table: Table): number {
    let max = this.restoreIndex();
    if (table.startsWith(JOB_TABLE_PREFIX)) {
      const rest = table.slice(JOB_TABLE_PREFIX.length);
      const slash = rest.indexOf('/');
      const sep = rest.indexOf('\u0000', slash);
      const [of, namespace, jobId] = [rest.slice(0, slash), rest.slice(slash + 1, sep), rest.slice(sep + 1)];
      const rows = of === Table.Allocs ? this.allocsByJob(namespace, jobId) : of === Table.Evals ? this.evalsByJob(namespace, jobId) : this.deploymentsByJob(namespace, jobId);
      for (const r of rows) max = Math.max(max, r.ModifyIndex);
      return max;
    }
    const rest = table.slice(NODE_TABLE_PREFIX.length);
    if (rest.startsWith('allocs/')) {
      for (const a of this.allocsByNode(rest.slice('allocs/'.length))) max = Math.max(max, a.ModifyIndex);
    } else if (rest.startsWith('record/')) {
      max = Math.max(max, this.nodeById(rest.slice('record/'.length))?.ModifyIndex ?? 0);
    } else if (rest.startsWith('host_volumes/')) {
      for (const v of this.hostVolumesByNode(rest.slice('host_volumes/'.length))) max = Math.max(max, v.ModifyIndex);
    }
    return max;
  }

  /**
   * Marks one object written in this apply: its blocked readers, if it has any, are looked at
   * (object-tables.ts; nothing is stored, the pseudo-table's index is the object's own). The
   * apply is synchronous, so no reader can begin to wait on it before finishApply.
   */
  private touchObject(table: ObjectTable, key: string): void {
    if (this.watchedObjects.has(table, key)) this.touched.add(objectTableKey(table, key));
  }

  /** Moves a per-node or per-job pseudo-table to `index` (undone if the apply fails). */
  private touchPseudo(index: number, table: Table): void {
    this.nodeTables.move(table, index);
    this.touched.add(table);
  }

  /** Blocked readers woken by a change so far (not by their timeout or an abort). */
  watchWakeups(): number {
    return this.waiters.wakeups();
  }

  /** Readers blocked right now. */
  blockedWatches(): number {
    return this.waiters.size();
  }

  /** Every table's index, as a plain record (for snapshots). */
  tableIndexes(): Record<string, number> {
    return Object.fromEntries(this.tableIdx);
  }

  jobs(namespace: string, prefix = ''): Job[] {
    const out: Job[] = [];
    for (const j of this.jobsT.values()) {
      if ((namespace === '*' || j.Namespace === namespace) && j.ID.startsWith(prefix)) out.push(j);
    }
    return out.sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : a.Namespace < b.Namespace ? -1 : 1));
  }

  jobById(namespace: string, id: string): Job | undefined {
    return this.jobsT.get(jobKey(namespace, id));
  }

  jobVersions(namespace: string, id: string): Job[] {
    return this.jobVersionsT.get(jobKey(namespace, id)) ?? [];
  }

  jobSummary(namespace: string, id: string): JobSummary | undefined {
    return this.summariesT.get(jobKey(namespace, id));
  }

  allocs(prefix = ''): Allocation[] {
    return byPrefix(this.allocsT.values(), prefix);
  }

  allocById(id: string): Allocation | undefined {
    return this.allocsT.get(id);
  }

  allocsByJob(namespace: string, jobId: string): Allocation[] {
    return lookup(this.allocsByJobI.get(jobKey(namespace, jobId)), this.allocsT);
  }

  allocsByNode(nodeId: string): Allocation[] {
    return lookup(this.allocsByNodeI.get(nodeId), this.allocsT);
  }

  evals(prefix = ''): Evaluation[] {
    return byPrefix(this.evalsT.values(), prefix);
  }

  evalById(id: string): Evaluation | undefined {
    return this.evalsT.get(id);
  }

  evalsByJob(namespace: string, jobId: string): Evaluation[] {
    return lookup(this.evalsByJobI.get(jobKey(namespace, jobId)), this.evalsT);
  }

  nodes(prefix = ''): Node[] {
    return byPrefix(this.nodesT.values(), prefix);
  }

  nodeById(id: string): Node | undefined {
    return this.nodesT.get(id);
  }

  deployments(prefix = ''): Deployment[] {
    return byPrefix(this.deploymentsT.values(), prefix);
  }

  deploymentById(id: string): Deployment | undefined {
    return this.deploymentsT.get(id);
  }

  deploymentsByJob(namespace: string, jobId: string): Deployment[] {
    return lookup(this.deploymentsByJobI.get(jobKey(namespace, jobId)), this.deploymentsT).sort(
      (a, b) => b.CreateIndex - a.CreateIndex,
    );
  }

  /** Namespaces whose name starts with `prefix`, sorted by name. */
  namespaces(prefix = ''): Namespace[] {
    return this.namespaceTable.list().filter((n) => n.Name.startsWith(prefix));
  }

  namespaceByName(name: string): Namespace | undefined {
    return this.namespaceTable.get(name);
  }

  // ---- snapshots and blocking ----

  /** A consistent read-only view of the state as it is now; O(1). */
  snapshot(): StateSnapshot {
    // The scheduler's static answers read dynamic host volumes' capabilities beside the nodes,
    // so a volume's change is a new version of what those answers derive from (both indexes only grow).
    const nodesVersion = Math.max(this.tableIndex(Table.Nodes), this.tableIndex(Table.HostVolumes));
    return new StateSnapshot(this, this.epochs.begin(), this.index, this.schedulerConf, nodesVersion);
  }

  /** The scheduler configuration (replaced whole on change, so snapshots keep theirs). */
  schedulerConfig(): SchedulerConfiguration {
    return this.schedulerConf;
  }

  setSchedulerConfig(c: Omit<SchedulerConfiguration, 'CreateIndex' | 'ModifyIndex'>, index: number): void {
    const createIndex = this.schedulerConf.CreateIndex || index;
    this.schedulerConf = { ...c, CreateIndex: createIndex, ModifyIndex: index };
    this.touch(index, Table.SchedulerConfig);
  }

  /** The autopilot configuration (replaced whole on change). */
  autopilotConfig(): AutopilotConfig {
    return this.autopilotConf;
  }

  setAutopilotConfig(c: AutopilotConfigFields, index: number): void {
    const createIndex = this.autopilotConf.CreateIndex || index;
    this.autopilotConf = { ...c, CreateIndex: createIndex, ModifyIndex: index };
    this.touch(index, Table.AutopilotConfig);
  }

  /**
   * Resolves with the max index of `tables` once it exceeds afterIndex, or at timeout/abort
   * with the current one.
   */
  waitForChange(tables: Table[], afterIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    const cur = this.maxTableIndex(tables);
    if (cur > afterIndex || signal?.aborted || timeoutMs <= 0) return Promise.resolve(cur);
    return new Promise((resolve) => {
      let ended = false;
      const done = (): void => {
        if (ended) return;
        ended = true;
        timer.cancel();
        signal?.removeEventListener('abort', done);
        this.waiters.remove(waiter);
        this.watchedObjects.remove(tables);
        resolve(this.maxTableIndex(tables));
      };
      const waiter: ChangeWaiter = { tables, after: afterIndex, resolve: done };
      this.waiters.add(waiter);
      this.watchedObjects.add(tables);
      const timer = this.clock.setTimer(timeoutMs, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Resolves once latestIndex() >= index or after timeoutMs; returns the latest index. */
  waitForIndex(index: number, timeoutMs: number): Promise<number> {
    if (this.index >= index) return Promise.resolve(this.index);
    const all = Object.values(Table);
    const loop = async (): Promise<number> => {
      const deadline = this.clock.now() + timeoutMs;
      while (this.index < index && this.clock.now() < deadline) {
        await this.waitForChange(all, this.index, deadline - this.clock.now());
      }
      return this.index;
    };
    return loop();
  }

  private maxTableIndex(tables: Table[]): number {
    let m = 0;
    for (const t of tables) m = Math.max(m, this.tableIndex(t));
    return m;
  }

  // ---- writes (FSM only) ----

  /**
   * Runs one FSM apply so that it happens entirely or not at all: if fn throws, every table,
   * index and table index is put back as it was before fn began, and the error is rethrown.
   * An undo log (EpochClock.beginTxn) makes the tables and indexes record each write's old
   * value; it stays out of the snapshot chain so readers of older snapshots never walk it.
   */
  transact<T>(fn: () => T): T {
    const undo = this.epochs.beginTxn();
    const tableIdx = new Map(this.tableIdx);
    const index = this.index;
    try {
      return fn();
    } catch (err) {
      undo.rollback();
      this.tableIdx.clear();
      for (const [t, i] of tableIdx) this.tableIdx.set(t, i);
      this.index = index;
      this.touchedJobs.clear();
      this.touchedParents.clear();
      this.removedServices = [];
      this.nodeTables.rollback();
      this.touched.clear();
      this.wakeAll = false;
      throw err;
    } finally {
      this.epochs.endTxn();
    }
  }

  /** Marks `tables` changed at index. */
  touch(index: number, ...tables: Table[]): void {
    for (const t of tables) {
      this.tableIdx.set(t, index);
      this.touched.add(t);
    }
  }

  /** Ends one apply: recomputes derived job status, advances the index, wakes waiters. */
  finishApply(index: number): void {
    for (const key of this.touchedJobs) this.refreshJobStatus(key, index);
    this.touchedJobs.clear();
    for (const key of this.touchedParents) this.refreshChildren(key, index);
    this.touchedParents.clear();
    this.index = Math.max(this.index, index);
    this.nodeTables.commit();
    // Only the readers of what this apply touched are looked at (change-waiters.ts).
    const all = this.wakeAll;
    this.wakeAll = false;
    const touched = [...this.touched];
    this.touched.clear();
    this.waiters.wake(touched, (t) => this.tableIndex(t), all);
  }

  /** Inserts or replaces a job (already stamped) and records it as a version. */
  putJob(job: Job, index: number): void {
    const key = jobKey(job.Namespace, job.ID);
    this.jobsT.set(key, job);
    const versions = (this.jobVersionsT.get(key) ?? []).filter((v) => v.Version !== job.Version);
    this.jobVersionsT.set(key, [job, ...versions].slice(0, JOB_VERSIONS_KEPT));
    this.summariesT.set(key, summaryForJob(job, this.summariesT.get(key), index));
    this.touch(index, Table.Jobs, Table.JobVersions, Table.JobSummaries);
    this.touchObject(Table.Jobs, key);
    this.touchObject(Table.JobSummaries, key);
    this.touchedJobs.add(key);
    if (job.ParentID) this.touchedParents.add(jobKey(job.Namespace, job.ParentID));
  }

  /** Replaces a job object without a new version (status changes). */
  replaceJob(job: Job, index: number): void {
    const key = jobKey(job.Namespace, job.ID);
    this.jobsT.set(key, job);
    const versions = this.jobVersionsT.get(key);
    if (versions && versions[0]?.Version === job.Version) this.jobVersionsT.set(key, [job, ...versions.slice(1)]);
    this.touch(index, Table.Jobs);
    this.touchObject(Table.Jobs, key);
  }

  deleteJob(namespace: string, id: string, index: number): void {
    const key = jobKey(namespace, id);
    const gone = this.jobsT.get(key);
    if (gone?.ParentID) this.touchedParents.add(jobKey(namespace, gone.ParentID));
    this.jobsT.delete(key);
    this.jobVersionsT.delete(key);
    this.summariesT.delete(key);
    this.submissions.deleteJob(namespace, id);
    this.scalingEvents.deleteJob(namespace, id);
    this.touch(index, Table.Jobs, Table.JobVersions, Table.JobSummaries);
    this.touchObject(Table.Jobs, key);
    this.touchObject(Table.JobSummaries, key);
  }

  /**
   * Stores an allocation. `prev` is what the caller already read for `a.ID` (the table is large
   * and one lookup per write is measurable at a million allocations); omit it to look it up.
   */
  /**
   * Stores an allocation. `known` is what the caller already read for its ID — the stored
   * allocation, or null for one known not to be stored (a new placement) — so the million-row
   * table is not searched again; omitted, it is looked up.
   */
  putAlloc(a: Allocation, index: number, known?: Allocation | null): void {
    const prev = known === undefined ? this.allocsT.get(a.ID) : (known ?? undefined);
    this.allocsT.setKnown(a.ID, a, prev);
    this.nodeUsage.update(prev, a, isTerminalAlloc);
    this.liveness.allocWritten(jobKey(a.Namespace, a.JobID), a.ID, a);
    if (!prev) {
      this.allocsByNodeI.add(a.NodeID, a.ID);
      this.allocsByJobI.add(jobKey(a.Namespace, a.JobID), a.ID);
    } else if (prev.NodeID !== a.NodeID) {
      this.allocsByNodeI.remove(prev.NodeID, a.ID);
      this.allocsByNodeI.add(a.NodeID, a.ID);
      this.touchPseudo(index, nodeAllocsTableKey(prev.NodeID));
    }
    this.touchPseudo(index, nodeAllocsTableKey(a.NodeID));
    this.touchPseudo(index, jobAllocsTableKey(a.Namespace, a.JobID));
    const key = jobKey(a.Namespace, a.JobID);
    const summary = this.summariesT.get(key);
    if (summary) {
      const next = summaryWithAlloc(summary, prev, a, index);
      if (next) {
        this.summariesT.set(key, next);
        this.touch(index, Table.JobSummaries);
        this.touchObject(Table.JobSummaries, key);
      }
    }
    this.touch(index, Table.Allocs);
    this.touchObject(Table.Allocs, a.ID);
    this.touchedJobs.add(key);
    if (isTerminalClientStatus(a.ClientStatus)) this.deleteAllocServices(a.ID, index);
  }

  /**
   * Recomputes every job's summary from its allocations (PUT /v1/system/reconcile/summaries),
   * keeping each group's Queued count (which comes from evaluations) and the children counts.
   */
  reconcileJobSummaries(index: number): void {
    for (const job of this.jobsT.values()) {
      const key = jobKey(job.Namespace, job.ID);
      const existing = this.summariesT.get(key);
      let summary = summaryForJob(job, undefined, index);
      for (const tg of Object.keys(summary.Summary)) summary.Summary[tg] = { ...emptyTgSummary(), Queued: existing?.Summary[tg]?.Queued ?? 0 };
      summary = { ...summary, Children: existing?.Children ?? summary.Children, CreateIndex: existing?.CreateIndex ?? index };
      for (const a of this.allocsByJob(job.Namespace, job.ID)) summary = summaryWithAlloc(summary, undefined, a, index) ?? summary;
      this.summariesT.set(key, summary);
      this.touchObject(Table.JobSummaries, key);
    }
    this.touch(index, Table.JobSummaries);
  }

  deleteAlloc(id: string, index: number): void {
    const a = this.allocsT.get(id);
    if (!a) return;
    this.allocsT.delete(id);
    this.nodeUsage.update(a, undefined, isTerminalAlloc);
    this.allocsByNodeI.remove(a.NodeID, id);
    this.allocsByJobI.remove(jobKey(a.Namespace, a.JobID), id);
    this.liveness.allocWritten(jobKey(a.Namespace, a.JobID), id, undefined);
    this.touch(index, Table.Allocs);
    this.touchObject(Table.Allocs, id);
    this.touchPseudo(index, nodeAllocsTableKey(a.NodeID));
    this.touchPseudo(index, jobAllocsTableKey(a.Namespace, a.JobID));
    this.touchedJobs.add(jobKey(a.Namespace, a.JobID));
    this.deleteAllocServices(id, index);
  }

  putEval(e: Evaluation, index: number): void {
    const prev = this.evalsT.get(e.ID);
    this.evalsT.set(e.ID, e);
    const key = jobKey(e.Namespace, e.JobID);
    if (!prev) this.evalsByJobI.add(key, e.ID);
    this.liveness.evalWritten(key, e.ID, e);
    // Nomad keeps Queued in the summary from the eval's QueuedAllocations.
    const summary = this.summariesT.get(key);
    if (summary && e.QueuedAllocations) {
      let changed = false;
      const Summary = { ...summary.Summary };
      for (const [tg, n] of Object.entries(e.QueuedAllocations)) {
        const cur = Summary[tg];
        if (cur && cur.Queued !== n) {
          Summary[tg] = { ...cur, Queued: n };
          changed = true;
        }
      }
      if (changed) {
        this.summariesT.set(key, { ...summary, Summary, ModifyIndex: index });
        this.touch(index, Table.JobSummaries);
        this.touchObject(Table.JobSummaries, key);
      }
    }
    this.touch(index, Table.Evals);
    this.touchObject(Table.Evals, e.ID);
    this.touchPseudo(index, jobRowsTableKey(Table.Evals, e.Namespace, e.JobID));
    this.touchedJobs.add(key);
  }

  deleteEval(id: string, index: number): void {
    const e = this.evalsT.get(id);
    if (!e) return;
    this.evalsT.delete(id);
    this.evalsByJobI.remove(jobKey(e.Namespace, e.JobID), id);
    this.liveness.evalWritten(jobKey(e.Namespace, e.JobID), id, undefined);
    this.touch(index, Table.Evals);
    this.touchObject(Table.Evals, id);
    this.touchPseudo(index, jobRowsTableKey(Table.Evals, e.Namespace, e.JobID));
    this.touchedJobs.add(jobKey(e.Namespace, e.JobID));
  }

  nodePools(prefix = ''): NodePool[] {
    return this.pools.list(prefix);
  }

  nodePoolByName(name: string): NodePool | undefined {
    return this.pools.get(name);
  }

  variables(namespace: string, prefix = ''): Variable[] {
    return this.variableTable.list(namespace, prefix);
  }

  variableByPath(namespace: string, path: string): Variable | undefined {
    return this.variableTable.get(namespace, path);
  }

  hostVolumes(namespace: string, prefix = ''): HostVolume[] {
    return this.hostVolumeTable.list(namespace, prefix);
  }

  hostVolumeById(id: string): HostVolume | undefined {
    return this.hostVolumeTable.get(id);
  }

  hostVolumesByNode(nodeId: string): HostVolume[] {
    return this.hostVolumeTable.byNode(nodeId);
  }

  /**
   * Inserts or replaces a dynamic host volume (already stamped with its indexes): the volume
   * watches of its node (and of the node it left, if it moved) are woken, no other node's.
   */
  putHostVolume(v: HostVolume, index: number): void {
    const prev = this.hostVolumeTable.get(v.ID);
    this.hostVolumeTable.put(v);
    this.touch(index, Table.HostVolumes);
    if (prev && prev.NodeID !== v.NodeID) this.touchPseudo(index, nodeHostVolumesTableKey(prev.NodeID));
    this.touchPseudo(index, nodeHostVolumesTableKey(v.NodeID));
  }

  /** Removes a dynamic host volume, if there is one of that ID; answers it. Wakes its node's volume watches. */
  deleteHostVolume(id: string, index: number): HostVolume | undefined {
    const prev = this.hostVolumeTable.get(id);
    if (!prev) return undefined;
    this.hostVolumeTable.delete(id);
    this.touch(index, Table.HostVolumes);
    this.touchPseudo(index, nodeHostVolumesTableKey(prev.NodeID));
    return prev;
  }

  serviceRegistrations(namespace: string): ServiceRegistration[] {
    return this.serviceTable.list(namespace);
  }

  forEachServiceRegistration(namespace: string, fn: (r: ServiceRegistration) => void): void {
    this.serviceTable.forEach(namespace, fn);
  }

  serviceRegistrationsByName(namespace: string, name: string): ServiceRegistration[] {
    return this.serviceTable.byServiceName(namespace, name);
  }

  serviceRegistrationById(id: string): ServiceRegistration | undefined {
    return this.serviceTable.get(id);
  }

  serviceRegistrationsByAlloc(allocId: string): ServiceRegistration[] {
    return this.serviceTable.byAllocId(allocId);
  }

  serviceRegistrationsByJob(namespace: string, jobId: string): ServiceRegistration[] {
    return this.serviceTable.byJobId(namespace, jobId);
  }

  serviceIndex(namespace: string, name: string): number {
    return this.serviceTable.serviceIndex(namespace, name);
  }

  /** The registrations removed since the last call (this apply's), emptied. */
  takeRemovedServices(): ServiceRegistration[] {
    const out = this.removedServices;
    this.removedServices = [];
    return out;
  }

  /** Removes registrations by ID (those that exist); answers the ones removed. */
  deleteServiceRegistrations(ids: Iterable<string>, index: number): ServiceRegistration[] {
    const gone: ServiceRegistration[] = [];
    for (const id of ids) {
      const r = this.serviceTable.get(id);
      if (r && this.serviceTable.delete(id, index)) gone.push(r);
    }
    if (gone.length > 0) {
      this.touch(index, Table.Services);
      for (const r of gone) this.removedServices.push(r);
    }
    return gone;
  }

  /**
   * Removes an allocation's registrations (it ended, was lost or collected), as Nomad's state
   * store does for a client-terminal allocation; answers the ones removed.
   */
  deleteAllocServices(allocId: string, index: number): ServiceRegistration[] {
    const regs = this.serviceTable.byAllocId(allocId);
    return regs.length === 0 ? regs : this.deleteServiceRegistrations(regs.map((r) => r.ID), index);
  }

  /** Creates or replaces node pools (the FSM's NodePoolUpsert, and a node registering in a new pool). */
  upsertNodePools(pools: readonly Omit<NodePool, 'CreateIndex' | 'ModifyIndex'>[], index: number): void {
    for (const p of pools) this.pools.upsert(p, index);
    this.touch(index, Table.NodePools);
  }

  deleteNodePools(names: readonly string[], index: number): void {
    for (const n of names) this.pools.delete(n);
    this.touch(index, Table.NodePools);
  }

  putNode(n: Node, index: number): void {
    this.nodesT.set(n.ID, n);
    this.touch(index, Table.Nodes);
    this.touchPseudo(index, nodeTableKey(n.ID));
  }

  deleteNode(id: string, index: number): void {
    this.nodesT.delete(id);
    this.touch(index, Table.Nodes);
    this.touchPseudo(index, nodeTableKey(id));
  }

  putDeployment(d: Deployment, index: number): void {
    const prev = this.deploymentsT.get(d.ID);
    this.deploymentsT.set(d.ID, d);
    if (!prev) this.deploymentsByJobI.add(jobKey(d.Namespace, d.JobID), d.ID);
    this.touch(index, Table.Deployments);
    this.touchObject(Table.Deployments, d.ID);
    this.touchPseudo(index, jobRowsTableKey(Table.Deployments, d.Namespace, d.JobID));
  }

  /**
   * Marks one stored version of a job stable (or not) without making a new version; the job
   * itself too when that version is the current one. Returns the job version changed, if any.
   */
  setJobVersionStable(namespace: string, id: string, version: number, stable: boolean, index: number): Job | undefined {
    const key = jobKey(namespace, id);
    const versions = this.jobVersionsT.get(key);
    const old = versions?.find((v) => v.Version === version);
    if (!versions || !old || old.Stable === stable) return undefined;
    const changed: Job = { ...old, Stable: stable, ModifyIndex: index };
    this.jobVersionsT.set(key, versions.map((v) => (v === old ? changed : v)));
    const cur = this.jobsT.get(key);
    if (cur && cur.Version === version) this.jobsT.set(key, { ...cur, Stable: stable, ModifyIndex: index });
    this.touch(index, Table.Jobs, Table.JobVersions);
    this.touchObject(Table.Jobs, key);
    return changed;
  }

  /**
   * Sets (tag) or clears (null, by name) a version tag; answers whether anything changed. The
   * current job carries its version's tag too.
   */
  setJobVersionTag(namespace: string, id: string, name: string, version: number, tag: JobVersionTag | null, index: number): boolean {
    const key = jobKey(namespace, id);
    const versions = this.jobVersionsT.get(key);
    if (!versions) return false;
    const target = tag ? versions.find((v) => v.Version === version) : versions.find((v) => v.VersionTag?.Name === name);
    if (!target) return false;
    const changed: Job = { ...target, VersionTag: tag, ModifyIndex: index };
    this.jobVersionsT.set(key, versions.map((v) => (v === target ? changed : v)));
    const cur = this.jobsT.get(key);
    if (cur && cur.Version === target.Version) this.jobsT.set(key, { ...cur, VersionTag: tag, ModifyIndex: index });
    this.touch(index, Table.Jobs, Table.JobVersions);
    this.touchObject(Table.Jobs, key);
    return true;
  }

  deleteDeployment(id: string, index: number): void {
    const d = this.deploymentsT.get(id);
    if (!d) return;
    this.deploymentsT.delete(id);
    this.deploymentsByJobI.remove(jobKey(d.Namespace, d.JobID), id);
    this.touch(index, Table.Deployments);
    this.touchObject(Table.Deployments, id);
    this.touchPseudo(index, jobRowsTableKey(Table.Deployments, d.Namespace, d.JobID));
  }

  private refreshJobStatus(key: string, index: number): void {
    const job = this.jobsT.get(key);
    if (!job) return;
    const status = computeJobStatus(job, {
      hasAllocs: this.allocsByJobI.get(key).size > 0,
      hasLiveAlloc: this.liveness.hasLiveAlloc(key),
      hasEvals: this.evalsByJobI.get(key).size > 0,
      hasLiveEval: this.liveness.hasLiveEval(key),
    });
    if (status !== job.Status) {
      this.replaceJob({ ...job, Status: status, ModifyIndex: index }, index);
      if (job.ParentID) this.touchedParents.add(jobKey(job.Namespace, job.ParentID));
    }
  }

  /** Recounts a parent job's children (Nomad's JobSummary.Children). */
  private refreshChildren(key: string, index: number): void {
    const parent = this.jobsT.get(key);
    const summary = this.summariesT.get(key);
    if (!parent || !summary) return;
    const children = this.jobs(parent.Namespace, `${parent.ID}/`).filter((j) => j.ParentID === parent.ID);
    const counts = childrenSummary(children);
    if (sameChildren(summary.Children, counts)) return;
    this.summariesT.set(key, { ...summary, Children: counts, ModifyIndex: index });
    this.touch(index, Table.JobSummaries);
    this.touchObject(Table.JobSummaries, key);
  }

  // ---- persistence ----

  /** The whole state as plain data (allocations without their embedded job). */
  serialize(): SerializedState {
    return {
      index: this.index,
      tableIndexes: Object.fromEntries(this.tableIdx),
      jobs: [...this.jobsT.values()],
      jobVersions: [...this.jobVersionsT.values()],
      summaries: [...this.summariesT.values()],
      allocs: [...this.allocsT.values()].map((a) => this.serializeAlloc(a)),
      evals: [...this.evalsT.values()],
      nodes: [...this.nodesT.values()],
      deployments: [...this.deploymentsT.values()],
      schedulerConfig: this.schedulerConf,
      autopilotConfig: this.autopilotConf,
      submissions: this.submissions.serialize(),
      scalingEvents: this.scalingEvents.serialize(),
      namespaces: this.namespaceTable.serialize(),
      acl: this.acl.serialize(),
      nodePools: this.pools.serialize(),
      variables: this.variableTable.serialize(),
      services: this.serviceTable.serialize(),
      hostVolumes: this.hostVolumeTable.serialize(),
    };
  }

  private serializeAlloc(a: Allocation): { alloc: Allocation; jobVersion: number | null } {
    if (!a.Job) return { alloc: a, jobVersion: null };
    const versions = this.jobVersionsT.get(jobKey(a.Namespace, a.JobID)) ?? [];
    const shared = versions.find((v) => v.Version === a.Job?.Version);
    // Allocations share their job version's object; store it once, not per allocation.
    return shared ? { alloc: { ...a, Job: null }, jobVersion: a.Job.Version } : { alloc: a, jobVersion: null };
  }

  /**
   * Replaces the whole state with a serialized one (at startup, or on a follower catching up
   * from a snapshot; blocked readers whose tables moved are woken). Takes ownership of `s`: its
   * allocation rows become the stored allocations.
   */
  restore(s: SerializedState): void {
    for (const t of [this.jobsT, this.jobVersionsT, this.summariesT, this.allocsT, this.evalsT, this.nodesT, this.deploymentsT]) {
      t.clearForRestore();
    }
    this.nodeUsage.clear();
    for (const i of [this.allocsByNodeI, this.allocsByJobI, this.evalsByJobI, this.deploymentsByJobI]) i.clearForRestore();
    this.liveness.clearForRestore();
    for (const j of s.jobs) this.jobsT.set(jobKey(j.Namespace, j.ID), j);
    for (const v of s.jobVersions) if (v[0]) this.jobVersionsT.set(jobKey(v[0].Namespace, v[0].ID), v);
    for (const sm of s.summaries) this.summariesT.set(jobKey(sm.Namespace, sm.JobID), sm);
    const metrics = new MetricCompactor();
    // Consecutive allocations are mostly of one job version: look it up once per run of them.
    let lastKey = '';
    let lastVersion: number | null = null;
    let lastJob: Job | null = null;
    for (const { alloc: a, jobVersion } of s.allocs) {
      const key = jobKey(a.Namespace, a.JobID);
      if (a.Job === null || a.Job === undefined) {
        if (key !== lastKey || jobVersion !== lastVersion) {
          lastKey = key;
          lastVersion = jobVersion;
          lastJob = (this.jobVersionsT.get(key) ?? []).find((v) => v.Version === jobVersion) ?? null;
        }
        // The decoded rows belong to the restore: completed in place, not copied.
        a.Job = lastJob;
      }
      a.Metrics = metrics.compact(a.Metrics, a.NodeID);
      this.allocsT.set(a.ID, a);
      this.nodeUsage.update(undefined, a, isTerminalAlloc);
      this.allocsByNodeI.add(a.NodeID, a.ID);
      this.allocsByJobI.add(key, a.ID);
      this.liveness.allocWritten(key, a.ID, a);
    }
    for (const e of s.evals) {
      this.evalsT.set(e.ID, e);
      this.evalsByJobI.add(jobKey(e.Namespace, e.JobID), e.ID);
      this.liveness.evalWritten(jobKey(e.Namespace, e.JobID), e.ID, e);
    }
    for (const n of s.nodes) this.nodesT.set(n.ID, n);
    for (const d of s.deployments) {
      this.deploymentsT.set(d.ID, d);
      this.deploymentsByJobI.add(jobKey(d.Namespace, d.JobID), d.ID);
    }
    this.schedulerConf = s.schedulerConfig ?? defaultSchedulerConfig();
    this.autopilotConf = s.autopilotConfig ?? defaultAutopilotConfig();
    this.submissions.restore(s.submissions);
    this.scalingEvents.restore(s.scalingEvents);
    this.namespaceTable.restore(s.namespaces ?? implicitNamespaces(s.jobs, s.index));
    this.acl.restore(s.acl);
    this.variableTable.restore(s.variables);
    this.serviceTable.restore(s.services);
    this.hostVolumeTable.restore(s.hostVolumes);
    // Older states: the pools their nodes are in become real, as registering them would have made them.
    this.pools.restore(s.nodePools ?? s.nodes.filter((n) => n.NodePool).map((n) => ({ Name: n.NodePool, Description: '', Meta: null, SchedulerConfiguration: null, CreateIndex: n.CreateIndex, ModifyIndex: n.CreateIndex })));
    this.tableIdx.clear();
    for (const [t, i] of Object.entries(s.tableIndexes)) this.tableIdx.set(t as Table, i);
    this.nodeTables.clear();
    this.index = s.index;
    // A follower that loads a snapshot while serving: the watches whose tables the snapshot moved
    // past their index answer now (no apply of theirs may follow soon).
    this.waiters.wake([], (t) => this.tableIndex(t), true);
  }

  /**
   * Replaces the whole state with a saved one as log entry `index` (a snapshot restored into the
   * running cluster). The restored objects keep their own indexes, but every table — and the
   * state — is at `index`, above anything answered before, so blocking queries and watchers
   * never see the index go backwards: each wakes and reads the restored state. The restore's
   * index is kept as a table index of its own (RESTORE_INDEX_KEY, written into later snapshots)
   * so that one-object blocking queries answer at least it (restoreIndex()).
   */
  restoreAt(s: SerializedState, index: number): void {
    this.restore(s);
    this.tableIdx.clear();
    for (const t of Object.values(Table)) this.tableIdx.set(t, index);
    this.tableIdx.set(RESTORE_INDEX_KEY as Table, index);
    this.index = index;
    this.touchedJobs.clear();
    this.touchedParents.clear();
    this.wakeAll = true;
  }

  /** The log index of the last snapshot restored into the running cluster (0: none). */
  restoreIndex(): number {
    return this.tableIdx.get(RESTORE_INDEX_KEY as Table) ?? 0;
  }
}

/** The table-index key under which restoreAt() records the restore's index. */
const RESTORE_INDEX_KEY = 'snapshot_restore';
