/**
 * Allocation routes: list (with ?prefix=), read one by its full ID, and stop one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import { allocTableKey } from '../../server/state/object-tables.js';
import { allocStubView, allocView } from '../api-views/alloc-views.js';
import { notFound } from '../http-errors.js';
import { PageOrder, pagedList } from '../list-options.js';
import { optionalObjectBody } from '../request-body.js';
import { queryFlag, type RawQuery } from '../query-options.js';
import { answerRead, answerWrite, requireServer, modifyIndex, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers the allocation routes. */
export function registerAllocRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/allocations', acl.ns('read-job'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Allocs], (server, opts) =>
      // Paged as Nomad's Alloc.List: by create index and ID, by ID under ?prefix=; stubs for the page only.
      pagedList(
        server.state.allocs(opts.prefix || undefined).filter((a) => opts.namespace === '*' || a.Namespace === opts.namespace),
        opts.prefix ? PageOrder.Id : PageOrder.CreateIndexId,
        allocStubView,
      ),
    ),
  );

  app.get<{ Params: { id: string } }>('/v1/allocation/:id', acl.ns('read-job', 'alloc'), (req, reply) =>
    // Waits on this allocation only (Nomad's watch on its row): other allocations' writes wake none of these.
    answerRead(ctx, req, reply, [allocTableKey(req.params.id)], (server) => {
      const alloc = server.state.allocById(req.params.id);
      if (!alloc) throw notFound('alloc');
      return allocView(alloc);
    }, modifyIndex),
  );

  const stop = async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const server = requireServer(ctx);
    optionalObjectBody(req.body);
    const noShutdownDelay = queryFlag(req.query as RawQuery, 'no_shutdown_delay');
    if (!server.state.allocById(req.params.id)) throw notFound('alloc');
    const res = await server.stopAlloc(req.params.id, { noShutdownDelay });
    return answerWrite(req, reply, res.index, { EvalID: res.evalId, Index: res.index });
  };
  app.put<{ Params: { id: string } }>('/v1/allocation/:id/stop', acl.ns('alloc-lifecycle', 'alloc'), stop);
  app.post<{ Params: { id: string } }>('/v1/allocation/:id/stop', acl.ns('alloc-lifecycle', 'alloc'), stop);
}
