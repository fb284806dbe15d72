/**
 * Nomad's service catalogue for `provider = "nomad"` services: `GET /v1/services` (per namespace,
 * `*` for all), `GET /v1/service/:name`, `DELETE /v1/service/:name/:id`. Caravan stores a job's
 * services with the job but registers none (no service provider runs): the lists are empty —
 * never a 404, as Nomad answers for a name with no registrations — and a deletion finds nothing.
 */
import type { FastifyInstance } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { answerRead, requireServer, type RouteContext } from '../route-context.js';

/** Registers the service routes. */
export function registerServiceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/services', acl.ns('read-job'), (req, reply) => answerRead(ctx, req, reply, [Table.Jobs], () => []));
  app.get<{ Params: { name: string } }>('/v1/service/:name', acl.ns('read-job'), (req, reply) => answerRead(ctx, req, reply, [Table.Jobs], () => []));
  app.delete<{ Params: { name: string; id: string } }>('/v1/service/:name/:id', acl.ns('submit-job'), (req) => {
    requireServer(ctx);
    throw new HttpError('HTTP_NOT_FOUND', { what: `service registration "${req.params.id}" of service "${req.params.name}"` });
  });
}
