/**
 * `DELETE /v1/operator/raft/peer` (`nomad operator raft remove-peer`) and
 * `PUT /v1/operator/raft/transfer-leadership` (`nomad operator raft transfer-leadership`),
 * answered for Caravan's peer set, which is the leadership's members (routes/operator.ts): a
 * server's membership is held by its own lease, so a failed server is already gone from it and
 * a live one leaves by stopping. Leadership is an election on the log backend; it cannot be
 * handed to a chosen server.
 */
import type { FastifyInstance } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError, badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { requireServer, type RouteContext } from '../route-context.js';
import { clusterMembers } from './operator.js';

/** Registers the raft peer routes. */
export function registerOperatorRaftPeerRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.delete('/v1/operator/raft/peer', acl.rule('operator', 'write'), async (req) => {
    const server = requireServer(ctx);
    const q = req.query as RawQuery;
    const id = queryParam(q, 'id') ?? '';
    const address = queryParam(q, 'address') ?? '';
    if ((id === '') === (address === '')) throw badRequest('Must specify either ?id with the server\'s ID or ?address with IP:port of peer to remove');
    const member = clusterMembers(server, ctx.agent).find((m) => (id !== '' ? m.id === id : m.address === address) && m.status === 'alive');
    if (!member) throw badRequest(id !== '' ? `id "${id}" was not found in the Raft configuration` : `address "${address}" was not found in the Raft configuration`);
    throw badRequest(`server "${member.name}" is alive: a live Caravan server leaves the peer set by being stopped (its membership lease then lapses)`);
  });

  app.put('/v1/operator/raft/transfer-leadership', acl.rule('operator', 'write'), async () => {
    requireServer(ctx);
    throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'leadership transfer (leadership is an election on the log backend)' });
  });
}
