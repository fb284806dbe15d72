/**
 * `PUT|POST /v1/node/:id/drain` — Nomad's node drain: `{DrainSpec: {Deadline, IgnoreSystemJobs},
 * MarkEligible, Meta}` sets or replaces a drain; a null DrainSpec cancels it. Answers Nomad's
 * NodeDrainUpdateResponse. The leader's drainer (src/server/drain) migrates the allocations.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http-errors.js';
import { answerWrite, requireServer, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers the node drain route. */
export function registerNodeDrainRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const drain = async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.updateNodeDrain) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'node drain' });
    // The server decodes and checks the request (one admission boundary for every transport).
    const res = await server.updateNodeDrain(req.params.id, req.body);
    return answerWrite(req, reply, res.index, {
      EvalIDs: res.evalIds.length > 0 ? res.evalIds : null,
      EvalCreateIndex: res.evalIds.length > 0 ? res.index : 0,
      NodeModifyIndex: res.index,
      Index: res.index,
      LastContact: 0,
      KnownLeader: true,
    });
  };
  app.put<{ Params: { id: string } }>('/v1/node/:id/drain', acl.rule('node', 'write'), drain);
  app.post<{ Params: { id: string } }>('/v1/node/:id/drain', acl.rule('node', 'write'), drain);
}
