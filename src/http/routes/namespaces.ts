/**
 * Regions and namespaces: `GET /v1/regions` (this agent's region: Caravan is one region),
 * `GET /v1/namespaces` and `GET /v1/namespace/:name`. Namespaces are implicit in Caravan:
 * "default" always exists, and so does every namespace a job was registered in.
 */
import type { FastifyInstance } from 'fastify';
import { Table } from '../../server/server-api.js';
import { notFound } from '../http-errors.js';
import { answerRead, queryOptions, sendJson, type RouteContext } from '../route-context.js';
import { knownNamespaces } from '../search/prefix-search.js';
import { namespaceView } from '../api-views/namespace-views.js';

/** Registers /v1/regions, /v1/namespaces and /v1/namespace/:name. */
export function registerNamespaceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/regions', (req, reply) => sendJson(reply, [ctx.agent.region], queryOptions(req).pretty));

  app.get('/v1/namespaces', (req, reply) =>
    answerRead(ctx, req, reply, [Table.Jobs], (server, opts) =>
      knownNamespaces(server.state)
        .filter((n) => n.startsWith(opts.prefix))
        .map(namespaceView),
    ),
  );

  app.get<{ Params: { name: string } }>('/v1/namespace/:name', (req, reply) =>
    answerRead(ctx, req, reply, [Table.Jobs], (server) => {
      if (!knownNamespaces(server.state).includes(req.params.name)) throw notFound('namespace');
      return namespaceView(req.params.name);
    }),
  );
}
