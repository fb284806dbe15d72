/**
 * Scaling policies, as Nomad's API: `GET /v1/scaling/policies` (ScalingPolicyListStubs, with
 * `?job=`, `?type=` (a prefix, as Nomad's index) and `?prefix=` of the ID, in `?namespace=`, `*`
 * for every namespace the token may list) and `GET /v1/scaling/policy/:id` (a ScalingPolicy; 404
 * "policy not found"). Both block on the jobs table.
 *
 * Policies are the task groups' `scaling` blocks of the registered jobs, read from the jobs
 * themselves: a job's registration writes them, its purge removes them, and a stopped job's
 * policies are listed disabled (Nomad 1.10+). ACLs: the namespace's list-scaling-policies and
 * read-scaling-policy capabilities.
 */
import type { FastifyInstance } from 'fastify';
import type { StateReader } from '../../server/state/state-reader.js';
import { Table } from '../../server/state/state-reader.js';
import type { Job } from '../../structs/job.js';
import { scalingPolicyStub, type ScalingPolicy } from '../../structs/scaling-policy.js';
import { acl } from '../acl/route-acl.js';
import { namespaceFilter } from '../acl/acl-gate.js';
import { notFound } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { answerRead, modifyIndex, type RouteContext } from '../route-context.js';

/** The policy of one group as answered: a stopped job's is disabled, modified by the stop. */
function livePolicy(job: Job, p: ScalingPolicy): ScalingPolicy {
  if (!job.Stop) return p;
  return { ...p, Enabled: false, ModifyIndex: Math.max(p.ModifyIndex, job.JobModifyIndex) };
}

/** Every scaling policy of the jobs of `namespace` (`*`: all), by ID. */
export function scalingPolicies(state: StateReader, namespace: string): ScalingPolicy[] {
  const out: ScalingPolicy[] = [];
  for (const job of state.jobs(namespace)) {
    for (const tg of job.TaskGroups) if (tg.Scaling && tg.Scaling.ID !== '') out.push(livePolicy(job, tg.Scaling));
  }
  return out.sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
}

/** Registers the scaling policy routes. */
export function registerScalingPolicyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/scaling/policies', acl.ns('list-scaling-policies'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Jobs], (server, opts) => {
      const q = req.query as RawQuery;
      const job = queryParam(q, 'job') ?? '';
      const type = queryParam(q, 'type') ?? '';
      const listable = namespaceFilter(req, 'list-scaling-policies');
      return scalingPolicies(server.state, opts.namespace)
        .filter((p) => listable(p.Target['Namespace'] ?? ''))
        .filter((p) => (opts.prefix ? p.ID.startsWith(opts.prefix) : true))
        .filter((p) => job === '' || opts.namespace === '*' || p.Target['Job'] === job)
        .filter((p) => p.Type.startsWith(type))
        .map(scalingPolicyStub);
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/scaling/policy/:id', acl.ns('read-scaling-policy'), (req, reply) =>
    answerRead(
      ctx,
      req,
      reply,
      [Table.Jobs],
      (server, opts) => {
        const readable = namespaceFilter(req, 'read-scaling-policy');
        // A policy is read in its own namespace: another namespace's policy is not found here.
        const policy = scalingPolicies(server.state, opts.namespace).find((p) => p.ID === req.params.id);
        if (!policy || !readable(policy.Target['Namespace'] ?? '')) throw notFound('policy');
        return policy;
      },
      modifyIndex,
    ),
  );
}
