/**
 * Nomad's node pools: named groups of client nodes a job is placed in (`node_pool` in the job,
 * `client { node_pool = "…" }` on the node). Two are built in and cannot be changed or deleted:
 * `default` (every node and job without a pool) and `all` (every node; a job in it may run
 * anywhere). Others are created through the API, or on the fly when a node registers in one.
 */
import { CaravanError } from './caravan-error.js';

/** Nomad's NodePoolSchedulerConfiguration (Enterprise-only in Nomad; kept as given). */
export interface NodePoolSchedulerConfiguration {
  SchedulerAlgorithm?: string;
  MemoryOversubscriptionEnabled?: boolean | null;
}

/** Nomad's NodePool. */
export interface NodePool {
  Name: string;
  Description: string;
  Meta: Record<string, string> | null;
  SchedulerConfiguration: NodePoolSchedulerConfiguration | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** The built-in pools' names. */
export const BuiltinNodePool = { All: 'all', Default: 'default' } as const;

/** The built-in pools as Nomad describes them. */
export function builtinNodePools(): NodePool[] {
  return [
    { Name: BuiltinNodePool.All, Description: 'Node pool with all nodes in the cluster.', Meta: null, SchedulerConfiguration: null, CreateIndex: 1, ModifyIndex: 1 },
    { Name: BuiltinNodePool.Default, Description: 'Default node pool.', Meta: null, SchedulerConfiguration: null, CreateIndex: 1, ModifyIndex: 1 },
  ];
}

/** Whether `name` is one of the built-in pools. */
export function isBuiltinNodePool(name: string): boolean {
  return name === BuiltinNodePool.All || name === BuiltinNodePool.Default;
}

const NAME_PATTERN = /^[a-zA-Z0-9-_]{1,128}$/;
const MAX_DESCRIPTION = 256;

/** A node pool of the wrong shape; the reason names the field. */
export class NodePoolInvalidError extends CaravanError<'NODE_POOL_INVALID'> {
  constructor(reason: string) {
    super('NODE_POOL_INVALID', { reason });
    this.name = 'NodePoolInvalidError';
  }
}

/** Whether `name` is a valid pool name (Nomad's rule: 1-128 of letters, digits, `-`, `_`). */
export function isValidNodePoolName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/**
 * Admits a pool as the API sends it (Nomad's NodePool JSON): a valid Name, a Description of at
 * most 256 characters, string Meta values. Indexes are the state's, never the caller's.
 */
export function admitNodePool(raw: unknown): Omit<NodePool, 'CreateIndex' | 'ModifyIndex'> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new NodePoolInvalidError('node pool must be an object');
  const o = raw as Record<string, unknown>;
  const name = o['Name'];
  if (typeof name !== 'string' || !isValidNodePoolName(name)) {
    throw new NodePoolInvalidError(`invalid node pool Name ${JSON.stringify(name ?? '')}: want 1-128 letters, digits, "-" or "_"`);
  }
  const description = o['Description'] ?? '';
  if (typeof description !== 'string') throw new NodePoolInvalidError('Description must be a string');
  if (description.length > MAX_DESCRIPTION) throw new NodePoolInvalidError(`Description longer than ${MAX_DESCRIPTION} characters`);
  const meta = o['Meta'] ?? null;
  if (meta !== null) {
    if (typeof meta !== 'object' || Array.isArray(meta)) throw new NodePoolInvalidError('Meta must be an object of strings');
    for (const [k, v] of Object.entries(meta)) if (typeof v !== 'string') throw new NodePoolInvalidError(`Meta[${JSON.stringify(k)}] must be a string`);
  }
  const sched = o['SchedulerConfiguration'] ?? null;
  if (sched !== null && (typeof sched !== 'object' || Array.isArray(sched))) throw new NodePoolInvalidError('SchedulerConfiguration must be an object');
  const alg = (sched as NodePoolSchedulerConfiguration | null)?.SchedulerAlgorithm;
  if (alg !== undefined && alg !== '' && alg !== 'binpack' && alg !== 'spread') {
    throw new NodePoolInvalidError(`invalid SchedulerConfiguration.SchedulerAlgorithm ${JSON.stringify(alg)}: want "binpack" or "spread"`);
  }
  return {
    Name: name,
    Description: description,
    Meta: meta as Record<string, string> | null,
    SchedulerConfiguration: sched as NodePoolSchedulerConfiguration | null,
  };
}
