/**
 * Nomad's raft peer operations, answered for Caravan's peer set — the servers registered in the
 * log backend (routes/operator.ts):
 * - `DELETE /v1/operator/raft/peer?id=|address=` (`operator raft remove-peer`): a failed server
 *   (its lease lapsed) is removed from the member list every server keeps; a live one is
 *   refused (it leaves by being stopped: its membership is its own lease).
 * - `PUT /v1/operator/raft/transfer-leadership[?id=|address=]` (`operator raft
 *   transfer-leadership`): on etcd the leader hands leadership to the named server (or, naming
 *   none, the next in line): every server ahead of it in the election resigns — each asked at
 *   `PUT /v1/operator/raft/resign`, the leader last — so the named server's key becomes the
 *   lowest. Resigning only ever gives a lease up, so no two servers can lead at once
 *   (leader-election.ts). Answered on a follower by forwarding to the leader. Naming the
 *   leader is Nomad's no-op. With the embedded log (one server) there is no one to hand to.
 * All three need operator:write, as Nomad's.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError, badRequest } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { queryOptions, requireServer, sendJson, type RouteContext } from '../route-context.js';
import { clusterMembers } from './operator.js';
import { forwardHttp } from '../forward/http-forward.js';
import { FORWARDED_HEADER } from '../forward/alloc-target.js';
import { withScheme } from '../../tls/tls-config.js';
import type { ServerMember } from '../../server/server-api.js';

/** How long a transfer waits for the chosen server to be seen leading. */
const TRANSFER_WAIT_MS = 20_000;

/** The `?id=` or `?address=` of a request: exactly one for remove-peer, at most one for a transfer. */
function peerParams(req: FastifyRequest): { id: string; address: string } {
  const q = req.query as RawQuery;
  const id = queryParam(q, 'id') ?? '';
  const address = queryParam(q, 'address') ?? '';
  if (id !== '' && address !== '') throw badRequest('must specify id or address, not both');
  return { id, address };
}

function findPeer(members: ServerMember[], id: string, address: string): ServerMember {
  const m = members.find((x) => (id !== '' ? x.id === id : x.address === address));
  if (!m) throw badRequest(id !== '' ? `id "${id}" was not found in the Raft configuration` : `address "${address}" was not found in the Raft configuration`);
  return m;
}

/** Nomad's RaftIDAddress. */
const idAddress = (m: ServerMember | undefined) => ({ Address: m?.address ?? '', ID: m?.id ?? '' });

/** PUT `path` on another server with the caller's token (mutual TLS when the agent has it); resolves its status and body. */
function callServer(ctx: RouteContext, address: string, path: string, token: string | undefined): Promise<{ status: number; text: string }> {
  const url = new URL(path, withScheme(/^https?:\/\//.test(address) ? address : `http://${address}`, ctx.tls !== undefined));
  const send = ctx.tls ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const out = send(url, { method: 'PUT', headers: { [FORWARDED_HEADER]: '1', ...(token ? { 'X-Nomad-Token': token } : {}) }, ...(ctx.tls ? { agent: ctx.tls.clientAgent } : {}) }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    out.on('error', reject);
    out.end();
  });
}

/** Registers the raft peer routes. */
export function registerOperatorRaftPeerRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.delete('/v1/operator/raft/peer', acl.rule('operator', 'write'), async (req, reply) => {
    const server = requireServer(ctx);
    const { id, address } = peerParams(req);
    if (id === '' && address === '') throw badRequest("Must specify either ?id with the server's ID or ?address with IP:port of peer to remove");
    const member = findPeer(clusterMembers(server, ctx.agent), id, address);
    if (member.status === 'alive') throw badRequest(`server "${member.name}" is alive: a live Caravan server leaves the peer set by being stopped (its membership lease then lapses)`);
    if (!(await server.forgetServer?.(member.id))) throw badRequest(`server "${member.name}" could not be removed: it registered again`);
    return reply.code(200).send();
  });

  app.put('/v1/operator/raft/resign', acl.rule('operator', 'write'), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.resignLeadership?.()) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'resigning leadership with one server' });
    return sendJson(reply, {}, queryOptions(req).pretty);
  });

  const transfer = async (req: FastifyRequest, reply: FastifyReply) => {
    const server = requireServer(ctx);
    const { id, address } = peerParams(req);
    const alive = clusterMembers(server, ctx.agent).filter((m) => m.status === 'alive');
    const leader = alive.find((m) => m.leader);
    const named = id !== '' || address !== '' ? findPeer(alive, id, address) : undefined;
    if (named && named.leader) return sendJson(reply, { From: idAddress(leader), To: idAddress(named), Noop: true, Err: null }, queryOptions(req).pretty);
    const order = server.leadershipOrder?.();
    if (!order || order.length < 2) throw badRequest('cannot transfer leadership: there is no other server to transfer it to');
    if (!leader) throw new HttpError('HTTP_INTERNAL', { reason: 'No cluster leader' });
    const target = named ?? alive.find((m) => m.id === order[1]);
    if (!target) throw badRequest('cannot transfer leadership: no other server is alive');
    // The leader resigns last: a follower hands the request to it.
    if (!server.isLeader()) {
      if (req.headers[FORWARDED_HEADER] !== undefined) throw new HttpError('HTTP_INTERNAL', { reason: 'leadership changed during the transfer; try again' });
      return forwardHttp(req, reply, { nodeId: leader.name, baseUrl: /^https?:\/\//.test(leader.address) ? leader.address : `http://${leader.address}` }, ctx.tls);
    }
    const ahead = order.slice(0, Math.max(0, order.indexOf(target.id))).filter((sid) => sid !== leader.id);
    const token = typeof req.headers['x-nomad-token'] === 'string' ? req.headers['x-nomad-token'] : undefined;
    for (const sid of ahead) {
      const m = alive.find((x) => x.id === sid);
      if (!m) continue; // gone already: its key goes with its lease
      const res = await callServer(ctx, m.address, '/v1/operator/raft/resign', token).catch((err: Error) => ({ status: 0, text: err.message }));
      if (res.status !== 200) throw new HttpError('HTTP_INTERNAL', { reason: `server "${m.name}" did not resign: ${res.status} ${res.text}` });
    }
    server.resignLeadership?.();
    const deadline = Date.now() + TRANSFER_WAIT_MS;
    while (server.leaderAddress() !== target.address && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const now = server.leaderAddress();
    if (now !== target.address) throw new HttpError('HTTP_INTERNAL', { reason: `leadership went to ${now || 'no server'} instead of ${target.address}` });
    return sendJson(reply, { From: idAddress(leader), To: idAddress(target), Noop: false, Err: null }, queryOptions(req).pretty);
  };
  app.put('/v1/operator/raft/transfer-leadership', acl.rule('operator', 'write'), transfer);
  app.post('/v1/operator/raft/transfer-leadership', acl.rule('operator', 'write'), transfer);
}
