/**
 * The client agent's own routes, as Nomad's: `GET /v1/client/stats` (host CPU, memory, disk),
 * `GET /v1/client/gc` (destroy every terminal allocation here), `GET|POST /v1/client/metadata`
 * (static, dynamic and merged node meta; POST sets or unsets dynamic keys),
 * `GET /v1/client/allocation/:id/gc` and `GET /v1/client/allocation/:id/checks` (and
 * `/v1/allocation/:id/checks`). Node routes take `?node_id=` (POST: NodeID in the body) and are
 * forwarded to that node's agent; allocation routes go to the client holding the allocation.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClientHttpApi } from '../client-http-api.js';
import { forwardHttp } from '../forward/http-forward.js';
import { nodeTarget } from '../forward/node-target.js';
import { requestTarget } from '../forward/request-target.js';
import { badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { objectBody, optionalString } from '../request-body.js';
import { sendJson, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

type NodeReq = FastifyRequest<{ Querystring: RawQuery }>;
type AllocReq = FastifyRequest<{ Params: { id: string }; Querystring: RawQuery }>;

/** Registers the client's node and allocation-maintenance routes. */
export function registerClientNodeRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const pretty = (req: { query: RawQuery }) => queryParam(req.query, 'pretty') !== undefined;
  const onNode = (nodeIdOf: (req: NodeReq) => string, handler: (req: NodeReq, reply: FastifyReply, client: ClientHttpApi) => Promise<unknown>) =>
    async (req: NodeReq, reply: FastifyReply) => {
      const target = nodeTarget(ctx, nodeIdOf(req), req.headers);
      if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);
      return handler(req, reply, target.client);
    };
  const onAlloc = (handler: (req: AllocReq, reply: FastifyReply, client: ClientHttpApi) => Promise<unknown>) =>
    async (req: AllocReq, reply: FastifyReply) => {
      const target = requestTarget(ctx, req.params.id, req.headers);
      if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);
      return handler(req, reply, target.client);
    };
  const queryNode = (req: NodeReq) => queryParam(req.query, 'node_id') ?? '';

  app.get('/v1/client/stats', acl.rule('node', 'read'), onNode(queryNode, async (req, reply, client) => sendJson(reply, client.hostStats(), pretty(req))));

  // An empty body, as Nomad's: its Go client reads this answer into nothing (Nodes().GC), and
  // an empty answer is the only one that decodes there.
  app.get('/v1/client/gc', acl.rule('node', 'write'), onNode(queryNode, async (_req, reply, client) => {
    await client.collectAllAllocs();
    return reply.code(200).send();
  }));

  app.get('/v1/client/metadata', acl.rule('node', 'read'), onNode(queryNode, async (req, reply, client) => sendJson(reply, client.nodeMeta(), pretty(req))));

  const applyMeta = onNode(
    (req) => {
      const body = objectBody(req.body);
      return optionalString(body, 'NodeID') || (queryParam(req.query, 'node_id') ?? '');
    },
    async (req, reply, client) => {
      const body = objectBody(req.body);
      if (!('Meta' in body)) throw badRequest('missing "Meta": the keys to set (string) or unset (null)');
      return sendJson(reply, await client.applyNodeMeta(body['Meta']), pretty(req));
    },
  );
  app.post('/v1/client/metadata', acl.rule('node', 'write'), applyMeta);
  app.put('/v1/client/metadata', acl.rule('node', 'write'), applyMeta);

  app.get('/v1/client/allocation/:id/gc', acl.ns('submit-job', 'alloc'), onAlloc(async (req, reply, client) => {
    await client.collectAlloc(req.params.id);
    return sendJson(reply, {}, pretty(req));
  }));

  // The latest results of the allocation's native (`provider = "nomad"`) service checks, run by
  // the client holding it. An unknown allocation is a 404 (requestTarget).
  const checks = onAlloc(async (req, reply, client) => sendJson(reply, client.allocChecks?.(req.params.id) ?? {}, pretty(req)));
  app.get('/v1/client/allocation/:id/checks', acl.ns('read-job', 'alloc'), checks);
  app.get('/v1/allocation/:id/checks', acl.ns('read-job', 'alloc'), checks);
}
