/**
 * Operator routes: `GET /v1/operator/raft/configuration`, the Raft peer set as
 * `nomad operator raft list-peers` reads it. Caravan runs one embedded server, which is
 * the leader and the only voter.
 */
import type { FastifyInstance } from 'fastify';
import { queryOptions, requireServer, sendJson, setQueryMeta, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Nomad's RaftServer. */
export interface RaftServer {
  ID: string;
  Node: string;
  Address: string;
  Leader: boolean;
  Voter: boolean;
  RaftProtocol: string;
}

/** Registers the operator routes. */
export function registerOperatorRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/operator/raft/configuration', acl.rule('operator', 'read'), (req, reply) => {
    const server = requireServer(ctx);
    const index = Math.max(1, server.state.latestIndex());
    const servers: RaftServer[] = server.peers().map((address) => ({
      ID: address === server.leaderAddress() ? ctx.agent.name : address,
      Node: `${ctx.agent.name}.${ctx.agent.region}`,
      Address: address,
      Leader: address === server.leaderAddress(),
      Voter: true,
      RaftProtocol: '3',
    }));
    setQueryMeta(reply, index);
    return sendJson(reply, { Servers: servers, Index: index }, queryOptions(req).pretty);
  });
}
