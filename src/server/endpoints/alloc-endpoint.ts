/**
 * The allocation endpoint: a user stopping one allocation (the scheduler replaces it), and the
 * clients' reports on their allocations (authenticated with the node's SecretID; a newly failed
 * allocation gets its job an evaluation), applied at once on an idle server and batched into one
 * log entry per window across clients while a batch is being applied (alloc-update-batcher.ts).
 * A report that would revive a terminal allocation is dropped (client-status-revival.ts).
 */
import type { Evaluation } from '../../structs/index.js';
import { admitAllocUpdates } from '../client-report-admission.js';
import { revivesTerminalAlloc } from '../client-status-revival.js';
import { newEvaluation } from '../new-eval.js';
import { ServerError } from '../server-error.js';
import type { AllocClientUpdate } from '../../structs/alloc.js';
import type { EndpointContext } from './endpoint-context.js';
import { authenticateNode } from './node-endpoint.js';
import { AllocUpdateBatcher } from './alloc-update-batcher.js';

export class AllocEndpoint {
  /** Clients' reports of one window, applied together (Nomad's Node.UpdateAlloc batching). */
  readonly updateBatcher: AllocUpdateBatcher;
  /** Client reports dropped for reviving a terminal allocation (client-status-revival.ts), since start. */
  revivalsIgnored = 0;

  constructor(private readonly ctx: EndpointContext) {
    this.updateBatcher = new AllocUpdateBatcher({
      clock: ctx.clock,
      apply: (cmd) => ctx.apply(cmd),
      nowNanos: () => ctx.nowNanos(),
      ...(ctx.config.allocUpdateBatchMs !== undefined ? { windowMs: ctx.config.allocUpdateBatchMs } : {}),
    });
  }

  /** `noShutdownDelay`: the client kills the tasks without waiting their shutdown_delay. */
  async stopAlloc(allocId: string, opts: { noShutdownDelay?: boolean } = {}): Promise<{ evalId: string; index: number }> {
    const { store } = this.ctx;
    const alloc = store.allocById(allocId);
    if (!alloc) throw new ServerError('ALLOC_NOT_FOUND', { alloc: allocId });
    const job = store.jobById(alloc.Namespace, alloc.JobID) ?? alloc.Job;
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: alloc.JobID });
    const now = this.ctx.nowNanos();
    const e = newEvaluation(job, 'alloc-stop', now);
    const index = await this.ctx.apply({
      Type: 'AllocUpdateDesiredTransition',
      Allocs: { [allocId]: { Migrate: true, ...(opts.noShutdownDelay ? { NoShutdownDelay: true } : {}) } },
      Evals: [e],
      Now: now,
    });
    return { evalId: e.ID, index };
  }

  async updateAllocsFromClient(raw: unknown, secretId: string): Promise<{ index: number }> {
    const { store } = this.ctx;
    const updates = admitAllocUpdates(raw);
    const known: AllocClientUpdate[] = [];
    const failedJobs = new Map<string, Evaluation>();
    const now = this.ctx.nowNanos();
    for (const u of updates) {
      const prev = store.allocById(u.ID);
      if (!prev) continue;
      // Only the client of the allocation's node (holding its SecretID) reports on it.
      const node = store.nodeById(prev.NodeID);
      if (!node) continue;
      authenticateNode(node, secretId);
      // Ignored rather than refused: the client's batch carries its other allocations' reports,
      // which must not fail with it; the client learns the allocation's status from its watch.
      if (revivesTerminalAlloc(prev, u.ClientStatus)) {
        this.revivalsIgnored++;
        this.ctx.config.logger?.warn({ alloc_id: prev.ID, node_id: prev.NodeID, client_status: prev.ClientStatus, reported: u.ClientStatus }, 'ignoring a client report that revives a terminal allocation');
        continue;
      }
      known.push({ ...u, TaskStates: u.TaskStates ?? prev.TaskStates ?? {} });
      if (u.ClientStatus === 'failed' && prev.ClientStatus !== 'failed' && prev.DesiredStatus === 'run') {
        const job = store.jobById(prev.Namespace, prev.JobID);
        const key = `${prev.Namespace}\u0000${prev.JobID}`;
        if (job && !job.Stop && !failedJobs.has(key)) failedJobs.set(key, newEvaluation(job, 'alloc-failure', now));
      }
    }
    if (known.length === 0) return { index: store.latestIndex() };
    const index = await this.updateBatcher.submit(known, [...failedJobs.values()]);
    return { index };
  }
}
