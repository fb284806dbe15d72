/**
 * Cluster housekeeping an operator triggers: `PUT /v1/system/gc` (Nomad's forced garbage
 * collection) and `PUT /v1/system/reconcile/summaries` (job summaries recomputed from the
 * allocations). Both answer 200 with an empty body, as Nomad does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http-errors.js';
import { optionalObjectBody } from '../request-body.js';
import { requireServer, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers the /v1/system routes. */
export function registerSystemRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const gc = async (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    optionalObjectBody(req.body);
    if (!server.forceGarbageCollection) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'garbage collection' });
    const res = await server.forceGarbageCollection();
    ctx.logger?.info({ evals: res.evals, jobs: res.jobs }, 'forced garbage collection');
    return reply.code(200).header('X-Nomad-Index', String(Math.max(1, server.state.latestIndex()))).send('');
  };
  app.put('/v1/system/gc', acl.management(), gc);
  app.post('/v1/system/gc', acl.management(), gc);

  const reconcile = async (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    optionalObjectBody(req.body);
    if (!server.reconcileJobSummaries) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'summary reconciliation' });
    const res = await server.reconcileJobSummaries();
    return reply.code(200).header('X-Nomad-Index', String(Math.max(1, res.index))).send('');
  };
  app.put('/v1/system/reconcile/summaries', acl.management(), reconcile);
  app.post('/v1/system/reconcile/summaries', acl.management(), reconcile);
}
