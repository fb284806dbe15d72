/**
 * The evaluations a node change triggers (Nomad's createNodeEvals): one node-update eval for
 * every job with allocations on the node and for every system/sysbatch job.
 */
import type { Evaluation, Job } from '../structs/index.js';
import type { StateStore } from './state/state-store.js';
import { newEvaluation } from './new-eval.js';

/** Node-update evals for a node, at `nowNanos`. */
export function nodeUpdateEvals(state: StateStore, nodeId: string, nodeModifyIndex: number, nowNanos: number): Evaluation[] {
  const jobs = new Map<string, Job>();
  for (const a of state.allocsByNode(nodeId)) {
    const job = state.jobById(a.Namespace, a.JobID) ?? a.Job;
    if (job) jobs.set(`${job.Namespace}\u0000${job.ID}`, job);
  }
  for (const job of state.jobs('*')) {
    if ((job.Type === 'system' || job.Type === 'sysbatch') && !job.Stop) jobs.set(`${job.Namespace}\u0000${job.ID}`, job);
  }
  return [...jobs.values()].map((job) =>
    newEvaluation(job, 'node-update', nowNanos, { NodeID: nodeId, NodeModifyIndex: nodeModifyIndex }),
  );
}
