/**
 * The agent's scheduler-worker report (`nomad operator scheduler` helpers, `nomad operator
 * debug`), about this agent's own server, as Nomad answers it:
 * - `GET /v1/agent/schedulers`: Nomad's AgentSchedulerWorkersInfo, one entry per running
 *   worker with its Status and WorkloadStatus. Caravan runs its workers on the leader only (they
 *   dequeue from the leader's in-process broker), so a follower lists none.
 * - `GET /v1/agent/schedulers/config`: the pool's size and enabled schedulers.
 * - `PUT|POST /v1/agent/schedulers/config`: Caravan cannot resize the pool at runtime; the
 *   current configuration sent back unchanged (Nomad's documented round-trip) is accepted,
 *   any other is a 501 saying to set `server { num_schedulers }` and restart.
 * A client-only agent answers 400 "Server only endpoint", as Nomad.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError, badRequest } from '../http-errors.js';
import { queryOptions, sendJson, type RouteContext } from '../route-context.js';
import { optionalObjectBody } from '../request-body.js';
import type { SchedulerWorkers, ServerApi } from '../../server/server-api.js';

/** Nomad's ErrServerOnly text. */
const SERVER_ONLY = 'Server only endpoint';

function serverOf(ctx: RouteContext): ServerApi {
  if (!ctx.server) throw badRequest(SERVER_ONLY);
  return ctx.server;
}

function pool(server: ServerApi): SchedulerWorkers {
  return server.schedulerWorkers?.() ?? { numSchedulers: 0, enabledSchedulers: [], workers: [] };
}

function serverId(ctx: RouteContext): string {
  return `${ctx.agent.name}.${ctx.agent.region}`;
}

function configResponse(ctx: RouteContext, p: SchedulerWorkers): Record<string, unknown> {
  return { ServerID: serverId(ctx), NumSchedulers: p.numSchedulers, EnabledSchedulers: p.enabledSchedulers };
}

/** Whether a PUT body asks for exactly the pool this server runs (field names as Nomad's api). */
function asksForCurrent(req: FastifyRequest, p: SchedulerWorkers): boolean {
  const body = optionalObjectBody(req.body);
  const num = body['NumSchedulers'];
  const enabled = body['EnabledSchedulers'];
  if (num !== undefined && (typeof num !== 'number' || !Number.isInteger(num) || num < 0)) {
    throw badRequest('Invalid request: NumSchedulers must be a non-negative integer');
  }
  if (enabled !== undefined && enabled !== null && (!Array.isArray(enabled) || !enabled.every((s) => typeof s === 'string'))) {
    throw badRequest('Invalid request: EnabledSchedulers must be a list of scheduler names');
  }
  const sameNum = num === undefined || num === p.numSchedulers;
  const wanted = Array.isArray(enabled) ? [...(enabled as string[])].sort() : undefined;
  const sameEnabled = wanted === undefined || JSON.stringify(wanted) === JSON.stringify([...p.enabledSchedulers].sort());
  return sameNum && sameEnabled;
}

/** Registers /v1/agent/schedulers and /v1/agent/schedulers/config. */
export function registerAgentSchedulerRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/agent/schedulers', acl.rule('agent', 'read'), (req, reply) => {
    const p = pool(serverOf(ctx));
    const schedulers = p.workers.map((w) => ({
      ID: w.ID,
      EnabledSchedulers: w.EnabledSchedulers,
      Started: new Date(w.startedMs).toISOString(),
      Status: w.Status,
      WorkloadStatus: w.WorkloadStatus,
    }));
    return sendJson(reply, { ServerID: serverId(ctx), Schedulers: schedulers }, queryOptions(req).pretty);
  });

  app.get('/v1/agent/schedulers/config', acl.rule('agent', 'read'), (req, reply) =>
    sendJson(reply, configResponse(ctx, pool(serverOf(ctx))), queryOptions(req).pretty),
  );

  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/agent/schedulers/config',
    ...acl.rule('agent', 'write'),
    handler: (req, reply) => {
      const p = pool(serverOf(ctx));
      if (!asksForCurrent(req, p)) {
        throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'changing the scheduler worker pool at runtime (set server { num_schedulers } in the agent configuration and restart it)' });
      }
      return sendJson(reply, configResponse(ctx, p), queryOptions(req).pretty);
    },
  });
}
