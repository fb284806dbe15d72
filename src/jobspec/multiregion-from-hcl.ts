/**
 * Decoding of a job's `multiregion { strategy { max_parallel on_failure } region "name" { count
 * datacenters node_pool meta } }` block (Nomad Enterprise's multi-region deployments) into
 * Nomad's api.Multiregion shape. Caravan runs one region; the block is kept so that
 * registration can refuse it by name instead of the file failing to parse.
 */
import type { HclBody } from './hcl-body.js';
import type { JobDraft } from '../structs/job-draft.js';

type MultiregionDraft = NonNullable<JobDraft['Multiregion']>;
type RegionDraft = NonNullable<MultiregionDraft['Regions']>[number];

export function multiregionFromHcl(b: HclBody): MultiregionDraft {
  const m: MultiregionDraft = {};
  const strategy = b.block('strategy');
  if (strategy) {
    m.Strategy = {};
    const maxParallel = strategy.number('max_parallel');
    if (maxParallel !== undefined) m.Strategy.MaxParallel = maxParallel;
    const onFailure = strategy.string('on_failure');
    if (onFailure !== undefined) m.Strategy.OnFailure = onFailure;
    strategy.finish();
  }
  const regions = b.labelled('region').map(({ label, body }) => {
    const r: RegionDraft = { Name: label };
    const count = body.number('count');
    if (count !== undefined) r.Count = count;
    const datacenters = body.stringList('datacenters');
    if (datacenters !== undefined) r.Datacenters = datacenters;
    const nodePool = body.string('node_pool');
    if (nodePool !== undefined) r.NodePool = nodePool;
    const meta = body.stringMap('meta');
    if (meta !== undefined) r.Meta = meta;
    body.finish();
    return r;
  });
  if (regions.length > 0) m.Regions = regions;
  b.finish();
  return m;
}
