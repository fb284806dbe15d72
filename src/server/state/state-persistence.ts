/**
 * The state's tables as plain data and back: what a log snapshot persists (serializeTables) and
 * how a serialized state fills the tables again (loadTables), with the forms older versions wrote.
 * The store's own indexes, configurations and blocked readers are the store's (state-store.ts).
 */
import { implicitNamespaces, type SerializedState } from './serialized-state.js';
import { jobKey, type StateTables } from './state-tables.js';
import { MetricCompactor } from './compact-metric.js';
import { isTerminalAlloc } from '../../structs/alloc.js';
import type { Allocation, Job } from '../../structs/index.js';

/** What the store adds to its tables' rows in a serialized state. */
export type SerializedHead = Pick<SerializedState, 'index' | 'tableIndexes' | 'schedulerConfig' | 'autopilotConfig'>;

/** The whole state as plain data (allocations without their embedded job when their version is stored). */
export function serializeTables(t: StateTables, head: SerializedHead): SerializedState {
  // The keys in the order earlier versions wrote them (a snapshot's bytes stay comparable).
  return {
    index: head.index,
    tableIndexes: head.tableIndexes,
    jobs: [...t.jobsT.values()],
    jobVersions: [...t.jobVersionsT.values()],
    summaries: [...t.summariesT.values()],
    allocs: [...t.allocsT.values()].map((a) => serializeAlloc(t, a)),
    evals: [...t.evalsT.values()],
    nodes: [...t.nodesT.values()],
    deployments: [...t.deploymentsT.values()],
    schedulerConfig: head.schedulerConfig,
    autopilotConfig: head.autopilotConfig,
    submissions: t.submissions.serialize(),
    scalingEvents: t.scalingEvents.serialize(),
    namespaces: t.namespaceTable.serialize(),
    acl: t.acl.serialize(),
    nodePools: t.pools.serialize(),
    variables: t.variableTable.serialize(),
    services: t.serviceTable.serialize(),
    hostVolumes: t.hostVolumeTable.serialize(),
  };
}

function serializeAlloc(t: StateTables, a: Allocation): { alloc: Allocation; jobVersion: number | null } {
  if (!a.Job) return { alloc: a, jobVersion: null };
  const versions = t.jobVersionsT.get(jobKey(a.Namespace, a.JobID)) ?? [];
  const shared = versions.find((v) => v.Version === a.Job?.Version);
  // Allocations share their job version's object; store it once, not per allocation.
  return shared ? { alloc: { ...a, Job: null }, jobVersion: a.Job.Version } : { alloc: a, jobVersion: null };
}

/**
 * Replaces every table's rows with those of `s` (indexes and derived tables rebuilt), without
 * recording history. Takes ownership of `s`: its allocation rows become the stored allocations.
 */
export function loadTables(t: StateTables, s: SerializedState): void {
  for (const table of [t.jobsT, t.jobVersionsT, t.summariesT, t.allocsT, t.evalsT, t.nodesT, t.deploymentsT]) {
    table.clearForRestore();
  }
  t.nodeUsage.clear();
  for (const i of [t.allocsByNodeI, t.allocsByJobI, t.evalsByJobI, t.deploymentsByJobI]) i.clearForRestore();
  t.liveness.clearForRestore();
  for (const j of s.jobs) t.jobsT.set(jobKey(j.Namespace, j.ID), j);
  for (const v of s.jobVersions) if (v[0]) t.jobVersionsT.set(jobKey(v[0].Namespace, v[0].ID), v);
  for (const sm of s.summaries) t.summariesT.set(jobKey(sm.Namespace, sm.JobID), sm);
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
        lastJob = (t.jobVersionsT.get(key) ?? []).find((v) => v.Version === jobVersion) ?? null;
      }
      // The decoded rows belong to the restore: completed in place, not copied.
      a.Job = lastJob;
    }
    a.Metrics = metrics.compact(a.Metrics, a.NodeID);
    t.allocsT.set(a.ID, a);
    t.nodeUsage.update(undefined, a, isTerminalAlloc);
    t.allocsByNodeI.add(a.NodeID, a.ID);
    t.allocsByJobI.add(key, a.ID);
    t.liveness.allocWritten(key, a.ID, a);
  }
  for (const e of s.evals) {
    t.evalsT.set(e.ID, e);
    t.evalsByJobI.add(jobKey(e.Namespace, e.JobID), e.ID);
    t.liveness.evalWritten(jobKey(e.Namespace, e.JobID), e.ID, e);
  }
  t.draining.clearForRestore();
  for (const n of s.nodes) {
    t.nodesT.set(n.ID, n);
    t.draining.written(n.ID, n);
  }
  for (const d of s.deployments) {
    t.deploymentsT.set(d.ID, d);
    t.deploymentsByJobI.add(jobKey(d.Namespace, d.JobID), d.ID);
  }
  t.submissions.restore(s.submissions);
  t.scalingEvents.restore(s.scalingEvents);
  t.namespaceTable.restore(s.namespaces ?? implicitNamespaces(s.jobs, s.index));
  t.acl.restore(s.acl);
  t.variableTable.restore(s.variables);
  t.serviceTable.restore(s.services);
  t.hostVolumeTable.restore(s.hostVolumes);
  // Older states: the pools their nodes are in become real, as registering them would have made them.
  t.pools.restore(s.nodePools ?? s.nodes.filter((n) => n.NodePool).map((n) => ({ Name: n.NodePool, Description: '', Meta: null, SchedulerConfiguration: null, CreateIndex: n.CreateIndex, ModifyIndex: n.CreateIndex })));
}
