/**
 * The routes behind a client's allocation watch, as Nomad's client RPCs: GET
 * /v1/internal/node/:id/client-allocs (Node.GetClientAllocs) blocks on the node's own
 * allocations and answers only their IDs and AllocModifyIndex, with the index of the node's
 * dynamic host volumes (Caravan's `HostVolumesIndex`: the client pulls its volumes when it moves,
 * so each client holds one blocking request, not two); PUT /v1/internal/node/:id/allocs
 * (Alloc.GetAllocs) answers the full allocations of the IDs the client names that are on that
 * node. Both are authenticated by the node's SecretID (sent as token), whatever the ACL
 * enforcement, so one node never reads another's allocations. The public
 * GET /v1/node/:id/allocations stays Nomad's full list for other callers.
 */
import type { FastifyInstance } from 'fastify';
import { nodeAllocsTableKey, nodeHostVolumesTableKey } from '../../server/state/state-reader.js';
import { admitAllocIds, authenticateNodeRead, clientAllocIndexes, clientAllocsByIds } from '../../server/client-alloc-reads.js';
import { tokenFromHeaders } from '../query-options.js';
import { objectBody } from '../request-body.js';
import { allocView } from '../api-views/alloc-views.js';
import { answerRead, requireServer, sendJson, setQueryMeta, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

type IdReq = { Params: { id: string } };

/** Registers the routes of a client's allocation watch. */
export function registerNodeAllocWatchRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get<IdReq>('/v1/internal/node/:id/client-allocs', acl.nodeSecret(), (req, reply) => {
    const server = requireServer(ctx);
    // Checked before blocking: a wrong secret is refused at once, not after the wait.
    authenticateNodeRead(server.state, req.params.id, tokenFromHeaders(req.headers));
    const allocs = nodeAllocsTableKey(req.params.id);
    const volumes = nodeHostVolumesTableKey(req.params.id);
    // Woken by this node's allocations and host volumes only; the answer is IDs and indexes, a few bytes each.
    return answerRead(ctx, req, reply, [allocs, volumes], (s) => ({
      Allocs: clientAllocIndexes(s.state, req.params.id),
      HostVolumesIndex: s.state.tableIndex(volumes),
      Index: Math.max(1, s.state.tableIndex(allocs), s.state.tableIndex(volumes)),
    }));
  });

  app.put<IdReq>('/v1/internal/node/:id/allocs', acl.nodeSecret(), (req, reply) => {
    const server = requireServer(ctx);
    const ids = admitAllocIds(objectBody(req.body)['AllocIDs']);
    authenticateNodeRead(server.state, req.params.id, tokenFromHeaders(req.headers));
    const index = Math.max(1, server.state.tableIndex(nodeAllocsTableKey(req.params.id)));
    setQueryMeta(reply, index, server);
    return sendJson(reply, { Allocs: clientAllocsByIds(server.state, req.params.id, ids).map(allocView), Index: index }, false);
  });
}
