/**
 * Regions and namespaces: `GET /v1/regions` (this agent's region: Caravan is one region),
 * `GET /v1/namespaces` (`?prefix=`), `GET /v1/namespace/:name`, `PUT/POST /v1/namespace/:name`
 * (create or update from Nomad's Namespace JSON; the body's Name, when given, must be the
 * path's) and `DELETE /v1/namespace/:name` (refused for `default` and while the namespace holds
 * non-terminal jobs). Namespaces are objects of the replicated state; reads block on them.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { HttpError } from '../http-errors.js';
import { objectBody } from '../request-body.js';
import { answerRead, answerWrite, modifyIndex, queryOptions, requireServer, sendJson, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';
import { namespaceFilter, permissionDenied } from '../acl/acl-gate.js';

/** Registers /v1/regions, /v1/namespaces and /v1/namespace/:name. */
export function registerNamespaceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/regions', acl.public(), (req, reply) => sendJson(reply, [ctx.agent.region], queryOptions(req).pretty));

  app.get('/v1/namespaces', acl.filtered(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Namespaces], (server, opts) => {
      // With ACLs on, only the namespaces the token may do something in (Nomad's AllowNamespace).
      const visible = namespaceFilter(req);
      return server.state.namespaces(opts.prefix).filter((ns) => visible(ns.Name));
    }),
  );

  app.get<{ Params: { name: string } }>('/v1/namespace/:name', acl.token(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Namespaces], (server) => {
      const ns = server.state.namespaceByName(req.params.name);
      if (!namespaceFilter(req)(req.params.name)) throw permissionDenied();
      if (!ns) throw new CaravanError('NAMESPACE_NOT_FOUND', { namespace: req.params.name });
      return ns;
    }, modifyIndex),
  );

  const upsert = async (req: FastifyRequest<{ Params: { name?: string } }>, reply: FastifyReply) => {
    const server = requireServer(ctx);
    if (!server.upsertNamespace) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'namespaces' });
    const body = objectBody(req.body, 'namespace');
    const pathName = req.params.name;
    if (pathName !== undefined && pathName !== '') {
      if (body['Name'] === undefined || body['Name'] === '') body['Name'] = pathName;
      else if (body['Name'] !== pathName) throw new CaravanError('NAMESPACE_INVALID', { field: 'Name', reason: 'Namespace name does not match request path' });
    }
    const res = await server.upsertNamespace(body);
    return answerWrite(req, reply, res.index, null);
  };
  app.put('/v1/namespace', acl.management(), upsert);
  app.post('/v1/namespace', acl.management(), upsert);
  app.put('/v1/namespace/:name', acl.management(), upsert);
  app.post('/v1/namespace/:name', acl.management(), upsert);

  app.delete<{ Params: { name: string } }>('/v1/namespace/:name', acl.management(), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.deleteNamespace) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'namespaces' });
    const res = await server.deleteNamespace(req.params.name);
    return answerWrite(req, reply, res.index, null);
  });
}
