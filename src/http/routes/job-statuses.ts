/**
 * `GET/POST /v1/jobs/statuses`: the job list of Nomad's web UI. Every job of the namespace
 * (children of periodic and parameterized jobs only with `include_children=true`), or the jobs
 * a POST names in `Jobs: [{ID, Namespace}]`. Filtering (on the full job) and pagination come
 * from answerRead, as on every list; blocking queries wake on jobs, allocations and deployments.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import type { Job } from '../../structs/job.js';
import { badRequest } from '../http-errors.js';
import { jobStatusesJob } from '../job-statuses.js';
import { stubOf } from '../list-options.js';
import { queryFlag, type RawQuery } from '../query-options.js';
import { answerRead, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** The jobs a POST body names, or undefined for all of them. */
function namedJobs(body: unknown): { ID: string; Namespace: string }[] | undefined {
  if (body === undefined || body === null || body === '') return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  const jobs = (body as Record<string, unknown>)['Jobs'];
  if (jobs === undefined || jobs === null) return undefined;
  if (!Array.isArray(jobs)) throw badRequest('Jobs must be a list of {ID, Namespace}');
  return jobs.map((j, i) => {
    if (j === null || typeof j !== 'object' || typeof (j as Record<string, unknown>)['ID'] !== 'string') throw badRequest(`Jobs[${i}].ID must be a string`);
    const ns = (j as Record<string, unknown>)['Namespace'];
    return { ID: (j as Record<string, string>)['ID']!, Namespace: typeof ns === 'string' && ns !== '' ? ns : 'default' };
  });
}

/** Registers /v1/jobs/statuses. */
export function registerJobStatusesRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const handler = (req: FastifyRequest, reply: FastifyReply) => {
    const includeChildren = queryFlag(req.query as RawQuery, 'include_children');
    const named = req.method === 'POST' ? namedJobs(req.body) : undefined;
    return answerRead(ctx, req, reply, [Table.Jobs, Table.Allocs, Table.Deployments], (server, opts) => {
      const all = server.state.jobs(opts.namespace);
      let jobs: Job[];
      if (named) {
        jobs = named.map((n) => server.state.jobById(n.Namespace, n.ID)).filter((j): j is Job => j !== undefined);
      } else {
        jobs = all.filter((j) => (opts.prefix ? j.ID.startsWith(opts.prefix) : true) && (includeChildren || !j.ParentID));
      }
      return jobs.map((job) => {
        const isParent = Boolean(job.Periodic?.Enabled || job.ParameterizedJob);
        const children = isParent ? server.state.jobs(job.Namespace).filter((c) => c.ParentID === job.ID) : null;
        const status = jobStatusesJob(job, server.state.allocsByJob(job.Namespace, job.ID), server.state.deploymentsByJob(job.Namespace, job.ID), children);
        return stubOf(status, job);
      });
    });
  };
  app.get('/v1/jobs/statuses', acl.ns('read-job'), handler);
  app.post('/v1/jobs/statuses', acl.ns('read-job'), handler);
}
