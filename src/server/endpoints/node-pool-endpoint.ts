/**
 * The node pool endpoint: creates, replaces and deletes node pools (Nomad's NodePool.* RPCs), and
 * the check every job registration and plan makes that its `node_pool` exists. The built-in
 * `all` and `default` cannot be changed or deleted; a pool still holding nodes or non-terminal
 * jobs cannot be deleted. Every refusal changes nothing.
 */
import { admitNodePool, isBuiltinNodePool, type NodePool } from '../../structs/node-pool.js';
import type { Job } from '../../structs/index.js';
import { ServerError } from '../server-error.js';
import type { EndpointContext } from './endpoint-context.js';

export class NodePoolEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** Admits every pool first (all or nothing), then writes them in one command. */
  async upsertNodePools(raw: readonly unknown[]): Promise<{ index: number }> {
    const pools: Omit<NodePool, 'CreateIndex' | 'ModifyIndex'>[] = raw.map((p) => admitNodePool(p));
    if (pools.length === 0) throw new ServerError('NODE_POOL_INVALID', { reason: 'no node pools given' });
    for (const p of pools) {
      if (isBuiltinNodePool(p.Name)) throw new ServerError('NODE_POOL_BUILTIN', { action: 'modifying', pool: p.Name });
    }
    return { index: await this.ctx.apply({ Type: 'NodePoolUpsert', Pools: pools, Now: this.ctx.nowNanos() }) };
  }

  async deleteNodePool(name: string): Promise<{ index: number }> {
    const { store } = this.ctx;
    if (isBuiltinNodePool(name)) throw new ServerError('NODE_POOL_BUILTIN', { action: 'deleting', pool: name });
    if (!store.nodePoolByName(name)) throw new ServerError('NODE_POOL_NOT_FOUND', { pool: name });
    const region = this.ctx.config.region ?? 'global';
    if (store.nodes().some((n) => n.NodePool === name)) throw new ServerError('NODE_POOL_IN_USE', { pool: name, what: `nodes in regions: [${region}]` });
    if (store.jobs('*').some((j) => j.NodePool === name && j.Status !== 'dead')) {
      throw new ServerError('NODE_POOL_IN_USE', { pool: name, what: `non-terminal jobs in regions: [${region}]` });
    }
    return { index: await this.ctx.apply({ Type: 'NodePoolDelete', Names: [name], Now: this.ctx.nowNanos() }) };
  }
}

/** Refuses a job whose node pool does not exist (Nomad: "job … is in nonexistent node pool …"). */
export function checkJobNodePool(ctx: Pick<EndpointContext, 'store'>, job: Pick<Job, 'ID' | 'NodePool'>): void {
  const pool = job.NodePool || 'default';
  if (!ctx.store.nodePoolByName(pool)) throw new ServerError('JOB_NODE_POOL_UNKNOWN', { job: job.ID, pool });
}
