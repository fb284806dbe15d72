/**
 * Operator routes: `GET /v1/operator/raft/configuration`, the peer set as
 * `nomad operator raft list-peers` reads it: every server of the cluster (the leadership's
 * members), which of them leads, all voters. A single embedded server is the leader and the only voter.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerApi, ServerMember } from '../../server/server-api.js';
import { queryOptions, requireServer, sendJson, setQueryMeta, type AgentInfo, type RouteContext } from '../route-context.js';
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
    const servers: RaftServer[] = clusterMembers(server, ctx.agent)
      .filter((m) => m.status === 'alive')
      .map((m) => ({
        ID: m.id,
        Node: `${m.name}.${ctx.agent.region}`,
        Address: m.address,
        Leader: m.leader,
        Voter: true,
        RaftProtocol: '3',
      }));
    setQueryMeta(reply, index, server);
    return sendJson(reply, { Servers: servers, Index: index }, queryOptions(req).pretty);
  });
}

/** The servers of the cluster; a server without a members list is alone (its own agent). */
export function clusterMembers(server: ServerApi, agent: AgentInfo): ServerMember[] {
  if (server.members) return server.members();
  return [{ id: agent.name, name: agent.name, address: server.leaderAddress() || agent.httpAddr, leader: server.isLeader(), status: 'alive' }];
}
