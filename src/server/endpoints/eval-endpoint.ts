/**
 * The evaluation endpoint's destructive operation, Nomad's Eval.Delete (DELETE /v1/evaluations):
 * an operator's tool for clearing a backlog, allowed only while the scheduler configuration has
 * the eval broker paused, and only for evaluations safe to delete — their job is gone, stopped or
 * dead, or none of the allocations they placed still runs. Deleting by ID refuses the whole
 * request for one missing or unsafe evaluation; deleting by filter skips those.
 */
import { isTerminalAlloc } from '../../structs/alloc.js';
import type { Evaluation } from '../../structs/index.js';
import { ServerError } from '../server-error.js';
import type { EndpointContext } from './endpoint-context.js';

export class EvalEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** Whether deleting `e` leaves no running allocation without the evaluation that placed it. */
  isDeleteSafe(e: Evaluation): boolean {
    const { store } = this.ctx;
    const job = store.jobById(e.Namespace, e.JobID);
    if (!job || job.Stop || job.Status === 'dead') return true;
    return store.allocsByJob(e.Namespace, e.JobID).every((a) => a.EvalID !== e.ID || isTerminalAlloc(a));
  }

  /**
   * Deletes evaluations (and nothing else). `byFilter`: the IDs are a filter's matches, and unsafe
   * ones are skipped instead of refusing the request. Answers how many were deleted.
   */
  async deleteEvals(ids: readonly string[], byFilter: boolean): Promise<{ count: number; index: number }> {
    const { store } = this.ctx;
    if (!store.schedulerConfig().PauseEvalBroker) throw new ServerError('EVAL_DELETE_REFUSED', { reason: 'eval broker is enabled; eval broker must be paused to delete evals' });
    const doomed: string[] = [];
    for (const id of ids) {
      const e = store.evalById(id);
      if (!e) {
        if (byFilter) continue;
        throw new ServerError('EVAL_DELETE_REFUSED', { reason: `eval ${id} not found` });
      }
      if (!this.isDeleteSafe(e)) {
        if (byFilter) continue;
        throw new ServerError('EVAL_DELETE_REFUSED', { reason: `eval ${id} is not safe to delete: an allocation it placed is still running` });
      }
      doomed.push(id);
    }
    if (doomed.length === 0) return { count: 0, index: store.latestIndex() };
    const index = await this.ctx.apply({ Type: 'EvalDelete', EvalIDs: doomed, AllocIDs: [] });
    return { count: doomed.length, index };
  }
}
