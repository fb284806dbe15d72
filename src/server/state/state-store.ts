/**
 * The in-memory state store: the tables (state-tables.ts) with their writes, per-table indexes and
 * change notification for blocking queries (change-tracker.ts), derived job status and children
 * counts, and O(1) snapshots for the scheduler. Only the FSM writes; every write takes the log
 * index it happens at, and one apply (transact … finishApply) happens entirely or not at all.
 */
import type { SerializedState } from './serialized-state.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { NodePool } from '../../structs/node-pool.js';
import type { JobVersionTag } from '../../structs/job.js';
import { defaultSchedulerConfig, type SchedulerConfiguration } from '../../structs/scheduler-config.js';
import { defaultAutopilotConfig, type AutopilotConfig, type AutopilotConfigFields } from '../../structs/autopilot-config.js';
import type { Allocation, Deployment, Evaluation, Job, JobSummary, Node } from '../../structs/index.js';
import { Table, jobAllocsTableKey, jobRowsTableKey, nodeAllocsTableKey, nodeTableKey, type StateReader } from './state-reader.js';
import { ChangeTracker } from './change-tracker.js';
import { StateTables, jobKey } from './state-tables.js';
import { ServiceRegistrationWrites } from './service-registration-writes.js';
import { HostVolumeWrites } from './host-volume-writes.js';
import { loadTables, serializeTables } from './state-persistence.js';
import { computeJobStatus, countAllocInto, emptyTgSummary, summaryForJob, summaryWithAlloc } from './job-status.js';
import { isTerminalAlloc, isTerminalClientStatus } from '../../structs/alloc.js';
import { childrenSummary, sameChildren } from '../dispatch/children-summary.js';
import { StateSnapshot } from './state-snapshot.js';
import { systemClock, type Clock } from '../../time/clock.js';

export { jobKey };

/** How many versions of a job are kept, as Nomad does. */
export const JOB_VERSIONS_KEPT = 6;

/** What putAlloc did once for a job in one apply (StateStore.allocJob). */
interface AllocJobOfApply {
  index: number;
  namespace: string;
  jobId: string;
  key: string;
  /**
   * The summary this apply stored for the job, if it copied one: no reader has seen it (an apply
   * is synchronous and no snapshot begins inside one), so later allocations of the job in the
   * same apply count into it in place; the undo log holds the summary from before the apply.
   */
  summary: JobSummary | null;
}

/** The state store; reads implement StateReader, writes are for the FSM only. */
export class StateStore extends StateTables implements StateReader {
  private schedulerConf: SchedulerConfiguration = defaultSchedulerConfig();
  private autopilotConf: AutopilotConfig = defaultAutopilotConfig();
  /** Indexes, what the apply in progress touched, and the blocked readers. */
  private readonly changes: ChangeTracker;
  private readonly services: ServiceRegistrationWrites;
  private readonly volumes: HostVolumeWrites;
  private readonly touchedJobs = new Set<string>();
  /** Parents (periodic/parameterized) whose children changed in this apply. */
  private readonly touchedParents = new Set<string>();
  /** How many times the state was replaced whole (restore); snapshots taken before read the new state. */
  private restores = 0;
  /** The job of the last allocation written, within the apply at its index (see allocJob). */
  private lastAllocJob: AllocJobOfApply | null = null;

  /** @param clock times the waits of blocking queries (the server's clock; fake in tests). */
  constructor(clock: Clock = systemClock) {
    super();
    this.changes = new ChangeTracker(this, clock);
    this.services = new ServiceRegistrationWrites(this.serviceTable, this.changes);
    this.volumes = new HostVolumeWrites(this.hostVolumeTable, this.changes);
  }

  // ---- indexes and blocking reads (change-tracker.ts) ----

  latestIndex(): number {
    return this.changes.latestIndex();
  }

  tableIndex(table: Table): number {
    return this.changes.tableIndex(table);
  }

  /** Blocked readers woken by a change so far (not by their timeout or an abort). */
  watchWakeups(): number {
    return this.changes.watchWakeups();
  }

  /** Readers blocked right now. */
  blockedWatches(): number {
    return this.changes.blockedWatches();
  }

  /** Every table's index, as a plain record (for snapshots). */
  tableIndexes(): Record<string, number> {
    return this.changes.tableIndexes();
  }

  /**
   * How many times the state was replaced whole. A restore keeps no history, so a snapshot taken
   * before it reads the restored state and nothing about it looks changed (the plan applier asks).
   */
  restoreCount(): number {
    return this.restores;
  }

  /** The log index of the last snapshot restored into the running cluster (0: none). */
  restoreIndex(): number {
    return this.changes.restoreIndex();
  }

  /**
   * Resolves with the max index of `tables` once it exceeds afterIndex, or at timeout/abort
   * with the current one.
   */
  waitForChange(tables: Table[], afterIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    return this.changes.waitForChange(tables, afterIndex, timeoutMs, signal);
  }

  /** Resolves once latestIndex() >= index or after timeoutMs; returns the latest index. */
  waitForIndex(index: number, timeoutMs: number): Promise<number> {
    return this.changes.waitForIndex(index, timeoutMs);
  }

  /** A consistent read-only view of the state as it is now; O(1). */
  snapshot(): StateSnapshot {
    // The scheduler's static answers read dynamic host volumes' capabilities beside the nodes,
    // so a volume's change is a new version of what those answers derive from (both indexes only grow).
    const nodesVersion = Math.max(this.tableIndex(Table.Nodes), this.tableIndex(Table.HostVolumes));
    return new StateSnapshot(this, this.epochs.begin(), this.latestIndex(), this.schedulerConf, nodesVersion, this.restoreIndex());
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

  // ---- writes (FSM only) ----

  /**
   * Runs one FSM apply so that it happens entirely or not at all: if fn throws, every table,
   * index and table index is put back as it was before fn began, and the error is rethrown.
   * An undo log (EpochClock.beginTxn) makes the tables and indexes record each write's old
   * value; it stays out of the snapshot chain so readers of older snapshots never walk it.
   */
  transact<T>(fn: () => T): T {
    const undo = this.epochs.beginTxn();
    const savepoint = this.changes.savepoint();
    try {
      return fn();
    } catch (err) {
      undo.rollback();
      this.lastAllocJob = null;
      this.changes.rollback(savepoint);
      this.touchedJobs.clear();
      this.touchedParents.clear();
      this.services.discard();
      throw err;
    } finally {
      this.epochs.endTxn();
    }
  }

  /** Marks `tables` changed at index. */
  touch(index: number, ...tables: Table[]): void {
    this.changes.touch(index, ...tables);
  }

  /** Ends one apply: recomputes derived job status, advances the index, wakes waiters. */
  finishApply(index: number): void {
    this.lastAllocJob = null;
    for (const key of this.touchedJobs) this.refreshJobStatus(key, index);
    this.touchedJobs.clear();
    for (const key of this.touchedParents) this.refreshChildren(key, index);
    this.touchedParents.clear();
    this.changes.finishApply(index);
  }

  /** Inserts or replaces a job (already stamped) and records it as a version. */
  putJob(job: Job, index: number): void {
    const key = jobKey(job.Namespace, job.ID);
    this.jobsT.set(key, job);
    const versions = (this.jobVersionsT.get(key) ?? []).filter((v) => v.Version !== job.Version);
    this.jobVersionsT.set(key, [job, ...versions].slice(0, JOB_VERSIONS_KEPT));
    this.summariesT.set(key, summaryForJob(job, this.summariesT.get(key), index));
    this.touch(index, Table.Jobs, Table.JobVersions, Table.JobSummaries);
    this.changes.touchObject(Table.Jobs, key);
    this.changes.touchObject(Table.JobVersions, key);
    this.changes.touchObject(Table.JobSummaries, key);
    this.touchedJobs.add(key);
    if (job.ParentID) this.touchedParents.add(jobKey(job.Namespace, job.ParentID));
  }

  /** Replaces a job object without a new version (status changes). */
  replaceJob(job: Job, index: number): void {
    const key = jobKey(job.Namespace, job.ID);
    this.jobsT.set(key, job);
    const versions = this.jobVersionsT.get(key);
    if (versions && versions[0]?.Version === job.Version) {
      this.jobVersionsT.set(key, [job, ...versions.slice(1)]);
      // The version's ModifyIndex moved: what GET /v1/job/:id/versions answers moved with it.
      this.changes.touchObject(Table.JobVersions, key);
    }
    this.touch(index, Table.Jobs);
    this.changes.touchObject(Table.Jobs, key);
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
    this.changes.touchObject(Table.Jobs, key);
    this.changes.touchObject(Table.JobVersions, key);
    this.changes.touchObject(Table.JobSummaries, key);
  }

  /**
   * Stores an allocation. `known` is what the caller already read for its ID — the stored
   * allocation, or null for one known not to be stored (a new placement) — so the million-row
   * table is not searched again; omitted, it is looked up.
   */
  putAlloc(a: Allocation, index: number, known?: Allocation | null): void {
    const prev = known === undefined ? this.allocsT.get(a.ID) : (known ?? undefined);
    const job = this.allocJob(a, index);
    const key = job.key;
    this.allocsT.setKnown(a.ID, a, prev);
    this.nodeUsage.update(prev, a, isTerminalAlloc);
    this.liveness.allocWritten(key, a.ID, a);
    if (!prev) {
      this.allocsByNodeI.add(a.NodeID, a.ID);
      this.allocsByJobI.add(key, a.ID);
    } else if (prev.NodeID !== a.NodeID) {
      this.allocsByNodeI.remove(prev.NodeID, a.ID);
      this.allocsByNodeI.add(a.NodeID, a.ID);
      this.changes.touchPseudo(index, nodeAllocsTableKey(prev.NodeID));
    }
    this.changes.touchPseudo(index, nodeAllocsTableKey(a.NodeID));
    const summary = this.summariesT.get(key);
    if (summary) {
      // The summary this apply already copied is counted into; any other is copied (once).
      const changed = summary === job.summary ? countAllocInto(summary, prev, a, index) : this.copySummaryWithAlloc(key, job, summary, prev, a, index);
      if (changed) {
        this.touch(index, Table.JobSummaries);
        this.changes.touchObject(Table.JobSummaries, key);
      }
    }
    this.touch(index, Table.Allocs);
    this.changes.touchObject(Table.Allocs, a.ID);
    this.touchedJobs.add(key);
    if (isTerminalClientStatus(a.ClientStatus)) this.deleteAllocServices(a.ID, index);
  }

  /**
   * What putAlloc does once per job and apply rather than once per allocation: the job's key,
   * its allocations' pseudo-table moved to the index, and the summary this apply copied (a plan
   * writes thousands of one job's allocations in one apply; copying the summary, building the
   * keys and moving the table for each was a fifth of the apply).
   */
  private allocJob(a: Allocation, index: number): AllocJobOfApply {
    const last = this.lastAllocJob;
    if (last && last.index === index && last.namespace === a.Namespace && last.jobId === a.JobID) return last;
    const job: AllocJobOfApply = { index, namespace: a.Namespace, jobId: a.JobID, key: jobKey(a.Namespace, a.JobID), summary: null };
    this.changes.touchPseudo(index, jobAllocsTableKey(a.Namespace, a.JobID));
    this.lastAllocJob = job;
    return job;
  }

  /** Stores a copy of `summary` counting the allocation change; the copy is the apply's own from now on. */
  private copySummaryWithAlloc(key: string, job: AllocJobOfApply, summary: JobSummary, prev: Allocation | undefined, a: Allocation, index: number): boolean {
    const next = summaryWithAlloc(summary, prev, a, index);
    if (!next) return false;
    this.summariesT.set(key, next);
    job.summary = next;
    return true;
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
      this.changes.touchObject(Table.JobSummaries, key);
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
    this.changes.touchObject(Table.Allocs, id);
    this.changes.touchPseudo(index, nodeAllocsTableKey(a.NodeID));
    this.changes.touchPseudo(index, jobAllocsTableKey(a.Namespace, a.JobID));
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
        this.changes.touchObject(Table.JobSummaries, key);
      }
    }
    this.touch(index, Table.Evals);
    this.changes.touchObject(Table.Evals, e.ID);
    this.changes.touchPseudo(index, jobRowsTableKey(Table.Evals, e.Namespace, e.JobID));
    this.touchedJobs.add(key);
  }

  deleteEval(id: string, index: number): void {
    const e = this.evalsT.get(id);
    if (!e) return;
    this.evalsT.delete(id);
    this.evalsByJobI.remove(jobKey(e.Namespace, e.JobID), id);
    this.liveness.evalWritten(jobKey(e.Namespace, e.JobID), id, undefined);
    this.touch(index, Table.Evals);
    this.changes.touchObject(Table.Evals, id);
    this.changes.touchPseudo(index, jobRowsTableKey(Table.Evals, e.Namespace, e.JobID));
    this.touchedJobs.add(jobKey(e.Namespace, e.JobID));
  }

  /** Inserts or replaces a dynamic host volume (already stamped); wakes its readers and its node's (host-volume-writes.ts). */
  putHostVolume(v: HostVolume, index: number): void {
    this.volumes.put(v, index);
  }

  /** Removes a dynamic host volume, if there is one of that ID; answers it. Wakes its node's volume watches. */
  deleteHostVolume(id: string, index: number): HostVolume | undefined {
    return this.volumes.delete(id, index);
  }

  /** The registrations removed since the last call (this apply's), emptied. */
  takeRemovedServices(): ServiceRegistration[] {
    return this.services.takeRemoved();
  }

  /** Removes registrations by ID (those that exist); answers the ones removed. */
  deleteServiceRegistrations(ids: Iterable<string>, index: number): ServiceRegistration[] {
    return this.services.deleteByIds(ids, index);
  }

  /** Removes an allocation's registrations (it ended, was lost or collected), as Nomad does; answers them. */
  deleteAllocServices(allocId: string, index: number): ServiceRegistration[] {
    return this.services.deleteForAlloc(allocId, index);
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
    this.draining.written(n.ID, n);
    this.touch(index, Table.Nodes);
    this.changes.touchPseudo(index, nodeTableKey(n.ID));
  }

  deleteNode(id: string, index: number): void {
    this.nodesT.delete(id);
    this.draining.written(id, undefined);
    this.touch(index, Table.Nodes);
    this.changes.touchPseudo(index, nodeTableKey(id));
  }

  putDeployment(d: Deployment, index: number): void {
    const prev = this.deploymentsT.get(d.ID);
    this.deploymentsT.set(d.ID, d);
    if (!prev) this.deploymentsByJobI.add(jobKey(d.Namespace, d.JobID), d.ID);
    this.touch(index, Table.Deployments);
    this.changes.touchObject(Table.Deployments, d.ID);
    this.changes.touchPseudo(index, jobRowsTableKey(Table.Deployments, d.Namespace, d.JobID));
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
    this.changes.touchObject(Table.Jobs, key);
    this.changes.touchObject(Table.JobVersions, key);
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
    this.changes.touchObject(Table.Jobs, key);
    this.changes.touchObject(Table.JobVersions, key);
    return true;
  }

  deleteDeployment(id: string, index: number): void {
    const d = this.deploymentsT.get(id);
    if (!d) return;
    this.deploymentsT.delete(id);
    this.deploymentsByJobI.remove(jobKey(d.Namespace, d.JobID), id);
    this.touch(index, Table.Deployments);
    this.changes.touchObject(Table.Deployments, id);
    this.changes.touchPseudo(index, jobRowsTableKey(Table.Deployments, d.Namespace, d.JobID));
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
    this.changes.touchObject(Table.JobSummaries, key);
  }

  // ---- persistence (state-persistence.ts) ----

  /** The whole state as plain data (allocations without their embedded job). */
  serialize(): SerializedState {
    return serializeTables(this, {
      index: this.latestIndex(),
      tableIndexes: this.tableIndexes(),
      schedulerConfig: this.schedulerConf,
      autopilotConfig: this.autopilotConf,
    });
  }

  /**
   * Replaces the whole state with a serialized one (at startup, or on a follower catching up
   * from a snapshot; blocked readers whose tables moved are woken). Takes ownership of `s`: its
   * allocation rows become the stored allocations.
   */
  restore(s: SerializedState): void {
    this.restores++;
    loadTables(this, s);
    this.schedulerConf = s.schedulerConfig ?? defaultSchedulerConfig();
    this.autopilotConf = s.autopilotConfig ?? defaultAutopilotConfig();
    // A follower that loads a snapshot while serving: the watches whose tables the snapshot moved
    // past their index answer now (no apply of theirs may follow soon).
    this.changes.restored(s.index, s.tableIndexes);
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
    this.lastAllocJob = null;
    this.changes.restoredAt(index);
    this.touchedJobs.clear();
    this.touchedParents.clear();
  }
}
