/**
 * Nomad's client introduction endpoint: PUT (or POST) /v1/acl/identity/client-introduction-token
 * with `{NodeName, NodePool, TTL}` answers `{"JWT": …}`, a token a new client presents when it
 * first registers. Needs `node:write` (Nomad's). Registered whether or not ACLs are on, as Nomad
 * answers it either way: without ACLs anyone who reaches the API may mint one, which is why a
 * `strict` cluster turns ACLs on.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http-errors.js';
import { acl } from '../acl/route-acl.js';
import { queryOptions, requireServer, sendJson, type RouteContext } from '../route-context.js';

/** The endpoint's path (the CLI's `node intro create` calls it). */
export const CLIENT_INTRODUCTION_TOKEN_PATH = '/v1/acl/identity/client-introduction-token';

/** Registers the client introduction route. */
export function registerClientIntroductionRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const create = async (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.clientIntroduction) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'client introduction' });
    const res = await server.clientIntroduction.createToken(req.body);
    return sendJson(reply, res, queryOptions(req).pretty);
  };
  app.put(CLIENT_INTRODUCTION_TOKEN_PATH, acl.rule('node', 'write'), create);
  app.post(CLIENT_INTRODUCTION_TOKEN_PATH, acl.rule('node', 'write'), create);
}
