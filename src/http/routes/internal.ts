/**
 * Internal endpoints through which client agents reach the servers (Nomad uses RPC for
 * these): node registration, heartbeats, and batched allocation updates. Clients then watch
 * GET /v1/node/:id/allocations with blocking queries.
 */
import type { FastifyInstance } from 'fastify';
import type { AllocClientUpdate } from '../../server/server-api.js';
import { NodeStatus, isNodeStatus } from '../../structs/node.js';
import { isAllocClientStatus } from '../../structs/alloc.js';
import type { Node } from '../../structs/node.js';
import { checkDeploymentStatus, checkNodeRegistration, checkTaskStates } from '../client-report-checks.js';
import { badRequest } from '../http-errors.js';
import { arrayField, objectBody, objectField, optionalString } from '../request-body.js';
import { answerWrite, requireServer, type RouteContext } from '../route-context.js';


/** Checks the shape of one client alloc update; the message names the index and field. */
function checkAllocUpdate(raw: unknown, i: number): AllocClientUpdate {
  const where = `Allocs[${i}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest(`${where} must be a JSON object`);
  const u = raw as Record<string, unknown>;
  if (typeof u['ID'] !== 'string' || u['ID'] === '') throw badRequest(`${where}.ID must be specified`);
  if (!isAllocClientStatus(u['ClientStatus'])) {
    throw badRequest(`${where}.ClientStatus ${JSON.stringify(u['ClientStatus'])} is not a client status`);
  }
  const ts = u['TaskStates'];
  checkTaskStates(ts, where);
  checkDeploymentStatus(u['DeploymentStatus'], where);
  return {
    ID: u['ID'],
    NodeID: typeof u['NodeID'] === 'string' ? u['NodeID'] : '',
    ClientStatus: u['ClientStatus'] as AllocClientUpdate['ClientStatus'],
    ClientDescription: typeof u['ClientDescription'] === 'string' ? u['ClientDescription'] : '',
    TaskStates: (ts ?? {}) as AllocClientUpdate['TaskStates'],
    DeploymentStatus: (u['DeploymentStatus'] ?? null) as AllocClientUpdate['DeploymentStatus'],
  };
}

/** Registers the internal client-to-server endpoints. */
export function registerInternalRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.put('/v1/internal/node/register', async (req, reply) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    const node = objectField(body, 'Node');
    checkNodeRegistration(node);
    if (node['Status'] !== undefined && !isNodeStatus(node['Status'])) {
      throw badRequest(`Node.Status ${JSON.stringify(node['Status'])} is not a node status`);
    }
    const res = await server.registerNode(node as unknown as Node);
    return answerWrite(req, reply, res.index, { HeartbeatTTL: res.heartbeatTtl, Index: res.index });
  });

  app.put<{ Params: { id: string } }>('/v1/internal/node/:id/heartbeat', async (req, reply) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    const status = optionalString(body, 'Status') || NodeStatus.Ready;
    if (!isNodeStatus(status)) throw badRequest(`Status ${JSON.stringify(status)} is not a node status`);
    const res = await server.heartbeatNode(req.params.id, status);
    return answerWrite(req, reply, res.index, { HeartbeatTTL: res.heartbeatTtl, Index: res.index });
  });

  app.put('/v1/internal/allocs/update', async (req, reply) => {
    const server = requireServer(ctx);
    const body = objectBody(req.body);
    const updates = arrayField(body, 'Allocs').map(checkAllocUpdate);
    const res = await server.updateAllocsFromClient(updates);
    return answerWrite(req, reply, res.index, { Index: res.index });
  });
}
