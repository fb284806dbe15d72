/**
 * The dispatch and periodic sub-resources of /v1/job/<id>: `dispatch` (PUT/POST, Nomad's
 * JobDispatchRequest → JobDispatchResponse) and `periodic/force` (PUT/POST). They are reached
 * through the /v1/job/* router of jobs.ts, which splits the job ID off the tail.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dispatchJob, parseDispatchBody } from '../../server/dispatch/dispatch-job.js';
import { forcePeriodicLaunch } from '../../server/periodic/periodic-force.js';
import { methodNotAllowed } from '../http-errors.js';
import { optionalObjectBody } from '../request-body.js';
import { answerWrite, queryOptions, requireServer, type RouteContext } from '../route-context.js';

function requireWrite(req: FastifyRequest): void {
  if (req.method !== 'PUT' && req.method !== 'POST') {
    throw methodNotAllowed(req.method, req.url);
  }
}

/** Answers PUT|POST /v1/job/<id>/dispatch. */
export async function dispatchRoute(ctx: RouteContext, req: FastifyRequest, reply: FastifyReply, jobId: string): Promise<FastifyReply> {
  requireWrite(req);
  const server = requireServer(ctx);
  const request = parseDispatchBody(optionalObjectBody(req.body));
  const res = await dispatchJob(server, queryOptions(req).namespace, jobId, request, ctx.clock.now());
  return answerWrite(req, reply, res.Index, res);
}

/** Answers PUT|POST /v1/job/<id>/periodic/force. */
export async function periodicForceRoute(ctx: RouteContext, req: FastifyRequest, reply: FastifyReply, jobId: string): Promise<FastifyReply> {
  requireWrite(req);
  const server = requireServer(ctx);
  optionalObjectBody(req.body);
  const res = await forcePeriodicLaunch(server, queryOptions(req).namespace, jobId, ctx.clock.now());
  return answerWrite(req, reply, res.Index, res);
}
