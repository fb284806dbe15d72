/**
 * Agent routes: /v1/agent/self (config, member, stats), /v1/agent/health,
 * /v1/agent/members (the gossip members; here, the servers this agent knows) and
 * /v1/agent/servers (the servers a client agent talks to).
 */
import type { FastifyInstance } from 'fastify';
import { CARAVAN_VERSION } from '../../structs/version.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { ErrorCatalogue } from '../../structs/error-catalogue.js';
import { badRequest, HttpError } from '../http-errors.js';
import { queryOptions, sendJson, type AgentInfo, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';
import { clusterMembers } from './operator.js';

/** Splits "host:port" (the port 0 when absent). */
function hostPort(addr: string): { host: string; port: number } {
  const colon = addr.lastIndexOf(':');
  if (colon <= 0) return { host: addr, port: 0 };
  return { host: addr.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(addr.slice(colon + 1)) || 0 };
}

/**
 * One member as /v1/agent/members and /v1/agent/self describe it, with what is true of this
 * agent: servers are reached at its HTTP address (there is no RPC or Serf port), and there is no
 * gossip, so the protocol and delegate versions are 0 and no Serf/Raft version tags are claimed.
 */
export function agentMember(agent: AgentInfo, leader: boolean, status: 'alive' | 'failed' = 'alive'): Record<string, unknown> {
  const { host, port } = hostPort(agent.httpAddr);
  return {
    Name: `${agent.name}.${agent.region}`,
    Addr: host,
    Port: port,
    Tags: {
      role: 'nomad',
      region: agent.region,
      dc: agent.datacenter,
      build: CARAVAN_VERSION,
      port: String(port),
      rpc_addr: host,
      bootstrap: leader ? '1' : '0',
      leader: leader ? '1' : '0',
      expect: '1',
    },
    Status: status,
    ProtocolMin: 0,
    ProtocolMax: 0,
    ProtocolCur: 0,
    DelegateMin: 0,
    DelegateMax: 0,
    DelegateCur: 0,
  };
}

/**
 * The client's node ID, or undefined while the client role is still starting: an agent listens
 * before its client has started (the client advertises the listening address), and its routes
 * answer CLIENT_NOT_READY until then.
 */
function startedClientNodeId(ctx: RouteContext): string | undefined {
  try {
    return ctx.client?.nodeId();
  } catch (err) {
    if (err instanceof CaravanError && err.code === 'CLIENT_NOT_READY') return undefined;
    throw err;
  }
}

/** Registers the agent routes. */
export function registerAgentRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/agent/self', acl.rule('agent', 'read'), (req, reply) => {
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
    const nodeId = startedClientNodeId(ctx);
    if (nodeId !== undefined) stats['client'] = { node_id: nodeId, known_servers: server ? ctx.agent.httpAddr : '' };
    if (server) {
      // state and term read together: a fault run checks that no two servers lead in one term or out of order.
      const term = server.leaderTerm?.() ?? '';
      stats['raft'] = { applied_index: String(server.state.latestIndex()), state: server.isLeader() ? 'Leader' : 'Follower', ...(term ? { term } : {}) };
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
          ...withListenPort(ctx.agent.config, hostPort(ctx.agent.httpAddr).port),
          Version: { Version: CARAVAN_VERSION, Revision: '', VersionPrerelease: '' },
        },
        member: ctx.agent.server ? agentMember(ctx.agent, server?.isLeader() ?? false) : null,
        stats,
      },
      queryOptions(req).pretty,
    );
  });

  app.get('/v1/agent/health', acl.public(), (req, reply) => {
    const out: Record<string, { ok: boolean; message: string }> = {};
    // Healthy once the client has started, so a caller that waited for health finds it serving.
    if (ctx.client) out['client'] = startedClientNodeId(ctx) !== undefined ? { ok: true, message: 'ok' } : { ok: false, message: 'the client is still starting' };
    if (ctx.server) {
      const known = ctx.server.isLeader() || ctx.server.leaderAddress() !== '';
      out['server'] = known ? { ok: true, message: 'ok' } : { ok: false, message: ErrorCatalogue.HTTP_AGENT_UNHEALTHY.message };
    }
    const ok = Object.values(out).every((v) => v.ok);
    return sendJson(reply, out, queryOptions(req).pretty, ok ? 200 : ErrorCatalogue.HTTP_AGENT_UNHEALTHY.status);
  });

  app.get('/v1/agent/members', acl.rule('node', 'read'), (req, reply) => {
    // Every server of the cluster: this agent as it knows itself, the others as the leadership lists them.
    const members = ctx.server
      ? clusterMembers(ctx.server, ctx.agent).map((m) =>
          m.address === ctx.agent.httpAddr || m.name === ctx.agent.name
            ? agentMember(ctx.agent, m.leader)
            : agentMember({ ...ctx.agent, name: m.name, httpAddr: m.address }, m.leader, m.status),
        )
      : [];
    return sendJson(
      reply,
      { ServerName: ctx.agent.name, ServerRegion: ctx.agent.region, ServerDC: ctx.agent.datacenter, Members: members },
      queryOptions(req).pretty,
    );
  });

  app.get('/v1/agent/servers', acl.rule('agent', 'read'), (req, reply) => {
    if (!ctx.client) throw new HttpError('HTTP_NO_CLIENT', { reason: 'no servers list' });
    return sendJson(reply, clientServers(ctx), queryOptions(req).pretty);
  });

  // Nomad's `node config -update-servers`: the client's server list replaced at run time.
  app.put('/v1/agent/servers', acl.rule('agent', 'write'), (req, reply) => {
    if (!ctx.client) throw new HttpError('HTTP_NO_CLIENT', { reason: 'no servers list' });
    const raw = (req.query as Record<string, string | string[] | undefined>)['address'];
    const addresses = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map((a) => a.trim()).filter((a) => a !== '');
    if (addresses.length === 0) throw badRequest('missing server address: give one or more ?address=host:port');
    if (ctx.server || !ctx.client.setServers) throw badRequest('this agent runs its own server: its client has no server list to update');
    ctx.client.setServers(addresses);
    return reply.send();
  });
}

/** The servers this agent's client uses: the in-process server, else the configured ones. */
function clientServers(ctx: RouteContext): string[] {
  if (ctx.server) return ctx.server.peers();
  let live: string[] | undefined;
  try {
    live = ctx.client?.servers?.();
  } catch {
    live = undefined; // the client has not started yet: its configuration tells
  }
  if (live && live.length > 0) return live;
  const client = ctx.agent.config['Client'];
  const servers = typeof client === 'object' && client !== null ? (client as Record<string, unknown>)['Servers'] : undefined;
  return Array.isArray(servers) ? servers.filter((s): s is string => typeof s === 'string') : [];
}

/** The config's Ports with HTTP set to the port actually listened on (the flag may say 0). */
function withListenPort(config: Record<string, unknown>, port: number): Record<string, unknown> {
  const ports = config['Ports'];
  if (typeof ports !== 'object' || ports === null) return {};
  return { Ports: { ...(ports as Record<string, unknown>), HTTP: port } };
}
