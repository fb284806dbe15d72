/**
 * `PUT|POST /v1/node/:id/drain` — Nomad's node drain: `{DrainSpec: {Deadline, IgnoreSystemJobs},
 * MarkEligible, Meta}` sets or replaces a drain; a null DrainSpec cancels it. Answers Nomad's
 * NodeDrainUpdateResponse. The leader's drainer (src/server/drain) migrates the allocations.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, HttpErrorCode, notFound } from '../http-errors.js';
import { answerWrite, requireServer, type RouteContext } from '../route-context.js';
import { parseDrainRequest, DrainRequestError } from '../../server/drain/node-drain-update.js';

/** Registers the node drain route. */
export function registerNodeDrainRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const drain = async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.updateNodeDrain) throw new HttpError(HttpErrorCode.Internal, 501, 'node drain is not supported by this server');
    let body;
    try {
      body = parseDrainRequest(req.body);
    } catch (err) {
      if (err instanceof DrainRequestError) throw new HttpError(HttpErrorCode.BadRequest, 400, err.message);
      throw err;
    }
    if (!server.state.nodeById(req.params.id)) throw notFound('node');
    const res = await server.updateNodeDrain(req.params.id, body);
    return answerWrite(req, reply, res.index, {
      EvalIDs: res.evalIds.length > 0 ? res.evalIds : null,
      EvalCreateIndex: res.evalIds.length > 0 ? res.index : 0,
      NodeModifyIndex: res.index,
      Index: res.index,
      LastContact: 0,
      KnownLeader: true,
    });
  };
  app.put<{ Params: { id: string } }>('/v1/node/:id/drain', drain);
  app.post<{ Params: { id: string } }>('/v1/node/:id/drain', drain);
}
