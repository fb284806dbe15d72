/**
 * Evaluation routes: list (with ?prefix= and ?job=/?status= filters), read one, and the
 * allocations an evaluation created.
 */
import type { FastifyInstance } from 'fastify';
import { Table } from '../../server/server-api.js';
import { allocStub } from '../../structs/alloc.js';
import { notFound } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { answerRead, modifyIndex, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers the evaluation routes. */
export function registerEvalRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/evaluations', acl.ns('read-job'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Evals], (server, opts) => {
      const q = req.query as RawQuery;
      const job = queryParam(q, 'job');
      const status = queryParam(q, 'status');
      return server.state
        .evals(opts.prefix || undefined)
        .filter((e) => (opts.namespace === '*' || e.Namespace === opts.namespace) && (job ? e.JobID === job : true) && (status ? e.Status === status : true));
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/evaluation/:id', acl.ns('read-job', 'eval'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Evals], (server) => {
      const ev = server.state.evalById(req.params.id);
      if (!ev) throw notFound('eval');
      return ev;
    }, modifyIndex),
  );

  app.get<{ Params: { id: string } }>('/v1/evaluation/:id/allocations', acl.ns('read-job', 'eval'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Allocs], (server) =>
      server.state
        .allocs()
        .filter((a) => a.EvalID === req.params.id)
        .map(allocStub),
    ),
  );
}
