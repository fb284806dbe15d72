/**
 * Caravan's reads for the web UI at scale (not Nomad endpoints; see docs/web-ui-scale.md):
 * `GET /v1/ui/topology` sums the cluster's nodes, live allocations, CPU and memory, overall and
 * per datacenter; `GET /v1/ui/topology/nodes` answers one row per node with what its live
 * allocations hold, paged and filtered as any list (`per_page`, `next_token`, `filter`).
 * Both block like any read (`index`, `wait`) on the nodes and allocations tables. They need the
 * node rule at read, as /v1/nodes does; they name no allocation, only count them.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerApi } from '../../server/server-api.js';
import { Table } from '../../server/state/state-reader.js';
import { clusterUsage, nodeUsage, type NodeUsage } from '../api-views/node-usage-views.js';
import { answerRead, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/**
 * The rows as of the nodes' and allocations' table indexes, computed once per change: a page
 * reads the summary and a page of rows at the same index, and every open page re-reads on the
 * same events (at 50,000 allocations a computation is tens of ms of the server's one thread).
 */
const cache = new WeakMap<ServerApi, { key: string; rows: NodeUsage[] }>();

function usageRows(server: ServerApi): NodeUsage[] {
  const key = `${server.state.tableIndex(Table.Nodes)}/${server.state.tableIndex(Table.Allocs)}`;
  const hit = cache.get(server);
  if (hit?.key === key) return hit.rows;
  const rows = server.state.nodes().map((n) => nodeUsage(n, server.state.allocsByNode(n.ID)));
  cache.set(server, { key, rows });
  return rows;
}

/** Registers the UI's topology reads. */
export function registerUiTopologyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/ui/topology', acl.rule('node', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Nodes, Table.Allocs], (server) => clusterUsage(usageRows(server))),
  );
  app.get('/v1/ui/topology/nodes', acl.rule('node', 'read'), (req, reply) =>
    answerRead(ctx, req, reply, [Table.Nodes, Table.Allocs], (server) => usageRows(server)),
  );
}
