/**
 * GET /v1/metrics: Nomad's JSON summary by default, Prometheus text with ?format=prometheus.
 */
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { queryOptions, sendJson, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers /v1/metrics. */
export function registerMetricsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/metrics', acl.public(), async (req, reply) => {
    const format = queryParam(req.query as RawQuery, 'format') ?? '';
    if (format === 'prometheus') {
      const text = await ctx.metrics.prometheus();
      return reply.header('Content-Type', ctx.metrics.registry.contentType).send(text);
    }
    if (format !== '' && format !== 'json') throw badRequest(`invalid value for "format": ${JSON.stringify(format)} (want prometheus)`);
    return sendJson(reply, await ctx.metrics.json(new Date(ctx.clock.now())), queryOptions(req).pretty);
  });
}
