/**
 * The gossip-membership routes of Nomad's agent API, answered for what Caravan's servers are:
 * they find each other through their shared log backend (etcd's member keys, each held by its
 * server's lease), not through Serf gossip.
 * - `PUT /v1/agent/join?address=…` (`nomad server join`): an address of a server already in the
 *   cluster counts as joined; any other is reported in `error`, as Nomad reports a failed join.
 * - `PUT /v1/agent/force-leave?node=…[&prune=true]` (`nomad server force-leave`): a failed server
 *   (lease lapsed) is removed from the member list every server keeps; a live or unknown one is
 *   left alone; success either way, as Nomad's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError, badRequest } from '../http-errors.js';
import { queryOptions, sendJson, type RouteContext } from '../route-context.js';
import { clusterMembers } from './operator.js';

function queryList(query: unknown, name: string): string[] {
  const raw = (query as Record<string, string | string[] | undefined>)[name];
  return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map((a) => a.trim()).filter((a) => a !== '');
}

/** Registers the membership routes. */
export function registerAgentMembershipRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const join = (req: FastifyRequest, reply: FastifyReply) => {
    if (!ctx.server) throw new HttpError('HTTP_NO_SERVER', {});
    const addresses = queryList(req.query, 'address');
    if (addresses.length === 0) throw badRequest('missing address to join: give one or more ?address=host:port');
    const known = new Set(clusterMembers(ctx.server, ctx.agent).filter((m) => m.status === 'alive').map((m) => m.address));
    const joined = addresses.filter((a) => known.has(a));
    const others = addresses.filter((a) => !known.has(a));
    const error = others.length === 0 ? '' : `${others.join(', ')}: not a server of this cluster; Caravan servers join through their shared log backend (start them with the same etcd endpoints), not by address`;
    return sendJson(reply, { num_joined: joined.length, error }, queryOptions(req).pretty);
  };
  // PUT or POST, as Nomad's.
  app.put('/v1/agent/join', acl.rule('agent', 'write'), join);
  app.post('/v1/agent/join', acl.rule('agent', 'write'), join);

  // Nomad's serf force-leave: a failed server is removed from the member list (with or without
  // ?prune, the same here); a live or unknown one is left alone, and the answer is success.
  app.put('/v1/agent/force-leave', acl.rule('agent', 'write'), async (req, reply) => {
    if (!ctx.server) throw new HttpError('HTTP_NO_SERVER', {});
    const node = queryList(req.query, 'node')[0];
    if (node === undefined) throw badRequest('missing node to force leave');
    const prune = queryList(req.query, 'prune')[0];
    if (prune !== undefined && !['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'].includes(prune)) throw badRequest('invalid prune value');
    const member = clusterMembers(ctx.server, ctx.agent).find((m) => m.id === node || m.name === node || `${m.name}.${ctx.agent.region}` === node);
    if (member && member.status === 'failed') await ctx.server.forgetServer?.(member.id);
    return reply.code(200).send();
  });
}
