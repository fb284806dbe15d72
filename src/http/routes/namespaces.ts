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

/** Nomad's Namespace object as /v1/namespace(s) answer it. */
export interface ApiNamespace {
  Name: string;
  Description: string;
  Quota: string;
  Capabilities: null;
  NodePoolConfiguration: null;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
}

/** The namespace object for `name` (the description Nomad gives the default namespace). */
export function apiNamespace(name: string): ApiNamespace {
  return {
    Name: name,
    Description: name === 'default' ? 'Default shared namespace' : '',
    Quota: '',
    Capabilities: null,
    NodePoolConfiguration: null,
    Meta: null,
    CreateIndex: 1,
    ModifyIndex: 1,
  };
}

/** Registers /v1/regions, /v1/namespaces and /v1/namespace/:name. */
export function registerNamespaceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/regions', (req, reply) => sendJson(reply, [ctx.agent.region], queryOptions(req).pretty));

  app.get('/v1/namespaces', (req, reply) =>
    answerRead(ctx, req, reply, [Table.Jobs], (server, opts) =>
      knownNamespaces(server.state)
        .filter((n) => n.startsWith(opts.prefix))
        .map(apiNamespace),
    ),
  );

  app.get<{ Params: { name: string } }>('/v1/namespace/:name', (req, reply) =>
    answerRead(ctx, req, reply, [Table.Jobs], (server) => {
      if (!knownNamespaces(server.state).includes(req.params.name)) throw notFound('namespace');
      return apiNamespace(req.params.name);
    }),
  );
}
