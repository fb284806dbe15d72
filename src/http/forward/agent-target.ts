/**
 * Which agent answers an agent route that may name another one (`?node_id=` or `?server_id=`,
 * as Nomad's pprof, monitor and monitor export): this agent when neither is named (or it is the
 * one named), else the named client's agent (node-target.ts) or the named server's — by name,
 * ID, or "leader" — reached at its advertised HTTP address. Naming both is Nomad's 400. A
 * request already forwarded once is answered here, never forwarded again.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteContext } from '../route-context.js';
import { HttpError, badRequest } from '../http-errors.js';
import { FORWARDED_HEADER, type RemoteClient } from './alloc-target.js';
import { nodeTarget } from './node-target.js';
import { clusterMembers } from '../routes/operator.js';

/** Where an agent route is answered. */
export type AgentTarget = { kind: 'local' } | { kind: 'remote'; remote: RemoteClient };

/** Decides where a request naming `nodeId` and/or `serverId` ("" for none) is answered. */
export function agentTarget(ctx: RouteContext, nodeId: string, serverId: string, headers: IncomingHttpHeaders): AgentTarget {
  if (nodeId !== '' && serverId !== '') throw new HttpError('HTTP_NODE_AND_SERVER', {});
  if (headers[FORWARDED_HEADER] !== undefined) return { kind: 'local' };
  if (nodeId !== '') {
    const t = nodeTarget(ctx, nodeId, headers);
    return t.kind === 'local' ? { kind: 'local' } : t;
  }
  if (serverId === '') return { kind: 'local' };
  if (!ctx.server) throw badRequest('server_id needs a server agent: ask one of the servers');
  const members = clusterMembers(ctx.server, ctx.agent).filter((m) => m.status === 'alive');
  // A server is named as /v1/agent/members lists it ("<name>.<region>"), or by its name or ID.
  const named = (m: { name: string; id: string }) => m.name === serverId || m.id === serverId || `${m.name}.${ctx.agent.region}` === serverId;
  const member = serverId === 'leader' ? members.find((m) => m.leader) : members.find(named);
  if (!member) throw new HttpError('HTTP_NOT_FOUND', { what: `server "${serverId}"` });
  if (member.name === ctx.agent.name || member.address === ctx.agent.httpAddr) return { kind: 'local' };
  const addr = member.address;
  return { kind: 'remote', remote: { nodeId: member.name, baseUrl: /^https?:\/\//.test(addr) ? addr.replace(/\/+$/, '') : `http://${addr}` } };
}
