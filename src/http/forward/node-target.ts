/**
 * Where a client route that names a node (`?node_id=`, or NodeID in the body) is answered: by
 * this agent's client when it is that node (or when no node is named and this agent has a
 * client), otherwise by the node's own agent, reached through the server's state. As for
 * allocations, a request already forwarded once is never forwarded again.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteContext } from '../route-context.js';
import { badRequest, HttpError } from '../http-errors.js';
import { FORWARDED_HEADER, type AllocTarget } from './alloc-target.js';

/** Where the request for node `nodeId` ("" when none was named) goes; 400 or 404 when nowhere. */
export function nodeTarget(ctx: RouteContext, nodeId: string, headers: IncomingHttpHeaders): AllocTarget {
  const client = ctx.client;
  if (client && (nodeId === '' || nodeId === client.nodeId())) return { kind: 'local', client };
  if (nodeId === '') throw badRequest('missing node_id: this agent has no client, name the node to ask');
  const node = headers[FORWARDED_HEADER] === undefined ? ctx.server?.state.nodeById(nodeId) : undefined;
  if (!node || !node.HTTPAddr) throw new HttpError('HTTP_NOT_FOUND', { what: `node "${nodeId}"` });
  const addr = node.HTTPAddr;
  return { kind: 'remote', remote: { nodeId: node.ID, baseUrl: /^https?:\/\//.test(addr) ? addr.replace(/\/+$/, '') : `http://${addr}` } };
}
