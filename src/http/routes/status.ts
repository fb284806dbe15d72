/**
 * Status routes: the leader's RPC address and the server peers, as JSON strings.
 */
import type { FastifyInstance } from 'fastify';
import { queryOptions, requireServer, sendJson, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Registers /v1/status/leader and /v1/status/peers. */
export function registerStatusRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/status/leader', acl.public(), (req, reply) => {
    const server = requireServer(ctx);
    return sendJson(reply, server.leaderAddress(), queryOptions(req).pretty);
  });
  app.get('/v1/status/peers', acl.public(), (req, reply) => {
    const server = requireServer(ctx);
    return sendJson(reply, server.peers(), queryOptions(req).pretty);
  });
}
