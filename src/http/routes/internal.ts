/**
 * Internal endpoints through which client agents reach the servers (Nomad uses RPC for
 * these): node registration, heartbeats, and batched allocation updates. Clients then watch
 * their allocations through node-alloc-watch.ts (IDs and indexes, then the changed ones). The server admits each report and
 * authenticates the node by the SecretID its client sends as token (X-Nomad-Token), as Nomad's
 * clients authenticate their RPCs; this layer only parses the JSON envelope. Clients also
 * register and deregister their allocations' native services here. On a follower these
 * calls are forwarded to the leader (forward-to-leader/leader-forward.ts).
 */
import type { FastifyInstance } from 'fastify';
import { arrayField, objectBody, objectField } from '../request-body.js';
import { tokenFromHeaders } from '../query-options.js';
import type { ServerApi } from '../../server/server-api.js';
import { answerWrite, requestSignal, requireServer, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { looksLikeJwt } from '../../server/jwt/jwt-parts.js';

/**
 * The servers a client may use, sent with every registration and heartbeat answer (as Nomad's
 * NodeUpdateResponse.Servers): clients learn the whole cluster from any one server, and move to
 * another when theirs is gone.
 */
function knownServers(server: ServerApi): { RPCAdvertiseAddr: string }[] {
  return server
    .peers()
    .filter((a) => a !== '')
    .map((a) => ({ RPCAdvertiseAddr: a }));
}

/** Registers the internal client-to-server endpoints. */
export function registerInternalRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.put('/v1/internal/node/register', acl.nodeSecret(), async (req, reply) => {
    const server = requireServer(ctx);
    // A new client sends its introduction token as its token (as Nomad's clients authenticate
    // their first Node.Register with it); a registered node is known by the SecretID in the body.
    const token = tokenFromHeaders(req.headers);
    const res = await server.registerNode(objectField(objectBody(req.body), 'Node'), { introToken: looksLikeJwt(token) ? token : '' });
    return answerWrite(req, reply, res.index, { HeartbeatTTL: res.heartbeatTtl, Index: res.index, Servers: knownServers(server) });
  });

  app.put<{ Params: { id: string } }>('/v1/internal/node/:id/heartbeat', acl.nodeSecret(), async (req, reply) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    // Nomad's clients authenticate with the node's SecretID as their token.
    const res = await server.heartbeatNode(req.params.id, body['Status'], tokenFromHeaders(req.headers));
    return answerWrite(req, reply, res.index, { HeartbeatTTL: res.heartbeatTtl, Index: res.index, Servers: knownServers(server) });
  });

  app.put('/v1/internal/allocs/update', acl.nodeSecret(), async (req, reply) => {
    const server = requireServer(ctx);
    const updates = arrayField(objectBody(req.body), 'Allocs');
    const res = await server.updateAllocsFromClient(updates, tokenFromHeaders(req.headers));
    return answerWrite(req, reply, res.index, { Index: res.index });
  });

  // A client's service registrations of its allocations (Nomad: ServiceRegistration.Upsert and
  // DeleteByID over RPC), authenticated by the node's SecretID.
  app.put('/v1/internal/services/register', acl.nodeSecret(), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.serviceRegistrations) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'service registrations' });
    const res = await server.serviceRegistrations.upsertFromClient(objectBody(req.body), tokenFromHeaders(req.headers));
    return answerWrite(req, reply, res.index, { Index: res.index });
  });

  app.put('/v1/internal/services/deregister', acl.nodeSecret(), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.serviceRegistrations) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'service registrations' });
    const res = await server.serviceRegistrations.deleteFromClient(objectBody(req.body), tokenFromHeaders(req.headers));
    return answerWrite(req, reply, res.index, { Index: res.index });
  });

  // A task's template reads (Nomad: Variables.Read/List with the task's workload identity),
  // authenticated by the node's SecretID; may block on the variables table (the body's MinIndex).
  app.put('/v1/internal/task/variables', acl.nodeSecret(), async (req, reply) => {
    const server = requireServer(ctx);
    if (!server.taskVariables) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'variables' });
    const res = await server.taskVariables.read(req.body, tokenFromHeaders(req.headers), requestSignal(req, reply, ctx.shutdown.signal));
    reply.header('X-Nomad-Index', String(res.Index));
    return res;
  });

  // A task's workload identities (Nomad: Alloc.SignIdentities), signed for the client of the
  // allocation's node, authenticated by that node's SecretID.
  app.put('/v1/internal/task/identities', acl.nodeSecret(), async (req) => {
    const server = requireServer(ctx);
    if (!server.workloadIdentities) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'workload identities' });
    return { Identities: await server.workloadIdentities.sign(req.body, tokenFromHeaders(req.headers)) };
  });
}
