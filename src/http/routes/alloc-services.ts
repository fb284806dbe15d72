/**
 * `GET /v1/allocation/:id/services`: the service registrations of one allocation (Nomad's
 * `Allocations().Services`, `nomad alloc status -verbose`); blocks on the service table. An
 * unknown allocation is "alloc not found", as Nomad.
 */
import type { FastifyInstance } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import { acl } from '../acl/route-acl.js';
import { notFound } from '../http-errors.js';
import { answerRead, type RouteContext } from '../route-context.js';

/** Registers the allocation services route. */
export function registerAllocServiceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get<{ Params: { id: string } }>('/v1/allocation/:id/services', acl.ns('read-job', 'alloc'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Services, Table.Allocs], (server) => {
      if (!server.state.allocById(req.params.id)) throw notFound('alloc');
      return server.state.serviceRegistrationsByAlloc(req.params.id);
    }),
  );
}
