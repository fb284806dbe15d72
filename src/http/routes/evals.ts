/**
 * Evaluation routes: list (with ?prefix= and ?job=/?status= filters), read one, and the
 * allocations an evaluation created.
 */
import type { FastifyInstance } from 'fastify';
import { Table, jobAllocsTableKey } from '../../server/state/state-reader.js';
import { evalTableKey } from '../../server/state/object-tables.js';
import { allocStubView } from '../api-views/alloc-views.js';
import { evalView } from '../api-views/eval-views.js';
import { PageOrder, pagedList } from '../list-options.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { evaluateFilter } from '../filter/bexpr-eval.js';
import { parseFilter } from '../filter/bexpr-parse.js';
import { badRequest, HttpError, notFound } from '../http-errors.js';
import { objectBody } from '../request-body.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { answerRead, answerWrite, modifyIndex, requireServer, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers the evaluation routes. */
export function registerEvalRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/evaluations', acl.ns('read-job'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Evals], (server, opts) => {
      const q = req.query as RawQuery;
      const job = queryParam(q, 'job');
      const status = queryParam(q, 'status');
      // Paged as Nomad's Eval.List: by create index and ID, by ID under ?prefix=; views for the page only.
      return pagedList(
        server.state
          .evals(opts.prefix || undefined)
          .filter((e) => (opts.namespace === '*' || e.Namespace === opts.namespace) && (job ? e.JobID === job : true) && (status ? e.Status === status : true)),
        opts.prefix ? PageOrder.Id : PageOrder.CreateIndexId,
        evalView,
      );
    }),
  );

  // Nomad's EvalCountResponse: how many evaluations (in ?namespace=, with ?prefix=) match ?filter=.
  app.get('/v1/evaluations/count', acl.ns('read-job'), (req, reply) => {
    const raw = queryParam(req.query as RawQuery, 'filter');
    const filter = raw ? parseFilter(raw) : undefined;
    return answerRead(ctx, req, reply, [Table.Evals], (server, opts) => {
      const evals = server.state.evals(opts.prefix || undefined).filter((e) => opts.namespace === '*' || e.Namespace === opts.namespace);
      return { Count: filter ? evals.filter((e) => evaluateFilter(filter, e)).length : evals.length };
    });
  });

  // Nomad's Eval.Delete: {EvalIDs} or {Filter}, not both; answers {Count}.
  app.delete('/v1/evaluations', acl.management(), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.deleteEvals) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'evaluation deletion' });
    const body = objectBody(req.body, 'evaluation delete request');
    const ids = body['EvalIDs'] ?? [];
    const filterText = body['Filter'] ?? '';
    if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')) throw badRequest('EvalIDs must be a list of evaluation IDs');
    if (typeof filterText !== 'string') throw badRequest('Filter must be a string');
    if (filterText !== '' && ids.length > 0) throw new CaravanError('EVAL_DELETE_REFUSED', { reason: 'evals cannot be deleted by both ID and filter' });
    if (filterText === '' && ids.length === 0) throw new CaravanError('EVAL_DELETE_REFUSED', { reason: 'evals must be deleted by either ID or filter' });
    let res: { count: number; index: number };
    if (filterText !== '') {
      const filter = parseFilter(filterText);
      const matches = server.state.evals().filter((e) => evaluateFilter(filter, e)).map((e) => e.ID);
      res = await server.deleteEvals(matches, true);
    } else {
      res = await server.deleteEvals(ids as string[], false);
    }
    return answerWrite(req, reply, res.index, { Count: res.count });
  });

  app.get<{ Params: { id: string } }>('/v1/evaluation/:id', acl.ns('read-job', 'eval'), (req, reply) =>
    // Waits on this evaluation only.
    answerRead(ctx, req, reply, [evalTableKey(req.params.id)], (server) => {
      const ev = server.state.evalById(req.params.id);
      if (!ev) throw notFound('eval');
      return evalView(ev);
    }, modifyIndex),
  );

  app.get<{ Params: { id: string } }>('/v1/evaluation/:id/allocations', acl.ns('read-job', 'eval'), (req, reply) => {
    // An evaluation's allocations are its job's: wait on that job's allocations and read them
    // alone (not every allocation of the cluster); answer the allocation table's index, as Nomad's
    // Eval.Allocations. An unknown evaluation has none and waits on the table.
    const ev = requireServer(ctx).state.evalById(req.params.id);
    return answerRead(
      ctx,
      req,
      reply,
      [ev ? jobAllocsTableKey(ev.Namespace, ev.JobID) : Table.Allocs],
      (server) => {
        const e = server.state.evalById(req.params.id) ?? ev;
        return (e ? server.state.allocsByJob(e.Namespace, e.JobID) : []).filter((a) => a.EvalID === req.params.id).map(allocStubView);
      },
      () => requireServer(ctx).state.tableIndex(Table.Allocs),
    );
  });
}
