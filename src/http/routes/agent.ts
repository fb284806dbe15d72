/**
 * Agent routes: /v1/agent/self (config, member, stats), /v1/agent/health,
 * /v1/agent/members (the gossip members; here, the servers this agent knows) and
 * /v1/agent/servers (the servers a client agent talks to).
 */
import type { FastifyInstance } from 'fastify';
import { CARAVAN_VERSION } from '../../structs/version.js';
import { HttpError } from '../http-errors.js';
import { queryOptions, sendJson, type AgentInfo, type RouteContext } from '../route-context.js';

/** Nomad's RPC port, reported in member tags and by /v1/status/leader. */
export const RPC_PORT = 4647;

/** One member as /v1/agent/members and /v1/agent/self describe it. */
export function agentMember(agent: AgentInfo, leader: boolean): Record<string, unknown> {
  const host = agent.httpAddr.includes(':') ? agent.httpAddr.slice(0, agent.httpAddr.lastIndexOf(':')) : agent.httpAddr;
  return {
    Name: `${agent.name}.${agent.region}`,
    Addr: host,
    Port: 4648,
    Tags: {
      role: 'nomad',
      region: agent.region,
      dc: agent.datacenter,
      build: CARAVAN_VERSION,
      vsn: '1',
      mvn: '1',
      raft_vsn: '3',
      port: String(RPC_PORT),
      rpc_addr: host,
      bootstrap: leader ? '1' : '0',
      expect: '1',
    },
    Status: 'alive',
    ProtocolMin: 1,
    ProtocolMax: 5,
    ProtocolCur: 2,
    DelegateMin: 2,
    DelegateMax: 5,
    DelegateCur: 4,
  };
}

/** Registers the agent routes. */
export function registerAgentRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/agent/self', (req, reply) => {
    const server = ctx.server;
    const mem = process.memoryUsage();
    const stats: Record<string, Record<string, string>> = {
      nomad: {
        server: String(ctx.agent.server),
        leader: String(server?.isLeader() ?? false),
        leader_addr: server?.leaderAddress() ?? '',
        bootstrap: 'true',
        known_regions: '1',
      },
      runtime: {
        arch: process.arch,
        os: process.platform,
        version: process.version,
        goroutines: '0',
        max_procs: '1',
        heap_used: String(mem.heapUsed),
      },
    };
    if (ctx.client) stats['client'] = { node_id: ctx.client.nodeId(), known_servers: server ? ctx.agent.httpAddr : '' };
    if (server) {
      stats['raft'] = { applied_index: String(server.state.latestIndex()), state: server.isLeader() ? 'Leader' : 'Follower' };
    }
    return sendJson(
      reply,
      {
        // The Go client caches Region and Datacenter from here (Agent.Region()), so they are always set.
        config: {
          Region: ctx.agent.region,
          Datacenter: ctx.agent.datacenter,
          NodeName: ctx.agent.name,
          ...ctx.agent.config,
          Version: { Version: CARAVAN_VERSION, Revision: '', VersionPrerelease: '' },
        },
        member: ctx.agent.server ? agentMember(ctx.agent, server?.isLeader() ?? false) : null,
        stats,
      },
      queryOptions(req).pretty,
    );
  });

  app.get('/v1/agent/health', (req, reply) => {
    const out: Record<string, { ok: boolean; message: string }> = {};
    if (ctx.client) out['client'] = { ok: true, message: 'ok' };
    if (ctx.server) {
      const known = ctx.server.isLeader() || ctx.server.leaderAddress() !== '';
      out['server'] = known ? { ok: true, message: 'ok' } : { ok: false, message: 'No cluster leader' };
    }
    const ok = Object.values(out).every((v) => v.ok);
    return sendJson(reply, out, queryOptions(req).pretty, ok ? 200 : 500);
  });

  app.get('/v1/agent/members', (req, reply) => {
    const members = ctx.agent.server ? [agentMember(ctx.agent, ctx.server?.isLeader() ?? false)] : [];
    return sendJson(
      reply,
      { ServerName: ctx.agent.name, ServerRegion: ctx.agent.region, ServerDC: ctx.agent.datacenter, Members: members },
      queryOptions(req).pretty,
    );
  });

  app.get('/v1/agent/servers', (req, reply) => {
    if (!ctx.client) throw new HttpError('HTTP_NO_CLIENT', { reason: 'no servers list' });
    return sendJson(reply, clientServers(ctx), queryOptions(req).pretty);
  });
}

/** The servers this agent's client uses: the in-process server, else the configured ones. */
function clientServers(ctx: RouteContext): string[] {
  if (ctx.server) return [ctx.server.leaderAddress()];
  const client = ctx.agent.config['Client'];
  const servers = typeof client === 'object' && client !== null ? (client as Record<string, unknown>)['Servers'] : undefined;
  return Array.isArray(servers) ? servers.filter((s): s is string => typeof s === 'string') : [];
}
