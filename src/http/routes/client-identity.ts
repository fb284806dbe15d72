/**
 * Nomad's node identity routes (`nomad node identity get|renew`, Nomad 1.11+):
 * - `GET /v1/client/identity?node_id=…` reads the claims of a node's signed identity JWT;
 * - `PUT|POST /v1/client/identity/renew` (node_id in the query or the body's NodeID) asks the
 *   node to fetch a new one at its next heartbeat.
 * Caravan's nodes have no identity JWT: a node authenticates to its servers with its SecretID.
 * So a known node is answered 501 saying so, and an unknown one 400 "Unknown node", as Nomad
 * answers it. Without node_id the node is this agent's own client.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError, badRequest } from '../http-errors.js';
import type { RouteContext } from '../route-context.js';

const NO_NODE_IDENTITY = 'node identities (Caravan nodes authenticate with their SecretID; there is no node identity token to read or renew)';

function queryNodeId(req: FastifyRequest): string {
  const raw = (req.query as Record<string, unknown>)['node_id'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  return typeof v === 'string' ? v.trim() : '';
}

function bodyNodeId(req: FastifyRequest): string {
  const v = (req.body as { NodeID?: unknown } | null | undefined)?.NodeID;
  if (v !== undefined && typeof v !== 'string') throw badRequest('NodeID must be a string');
  return (v ?? '').trim();
}

/** Refuses the request for what Caravan's node `id` (or this agent's own) is. */
function refuse(ctx: RouteContext, id: string): never {
  const own = ctx.client?.nodeId();
  const nodeId = id !== '' ? id : own;
  if (nodeId === undefined) throw badRequest('missing node_id: this agent runs no client');
  const known = nodeId === own || ctx.server?.state.nodeById(nodeId) !== undefined;
  if (!known) throw badRequest(`Unknown node "${nodeId}"`);
  throw new HttpError('HTTP_NOT_SUPPORTED', { feature: NO_NODE_IDENTITY });
}

/** Registers /v1/client/identity and /v1/client/identity/renew. */
export function registerClientIdentityRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/client/identity', acl.rule('node', 'read'), async (req) => refuse(ctx, queryNodeId(req)));
  app.route({
    method: ['PUT', 'POST'],
    url: '/v1/client/identity/renew',
    ...acl.rule('node', 'write'),
    handler: async (req) => refuse(ctx, queryNodeId(req) || bodyNodeId(req)),
  });
}
