/**
 * Where a client request for an allocation is answered: by this agent's client if it holds
 * the allocation, otherwise by the client that does, reached through the server's state
 * (alloc → NodeID → Node.HTTPAddr). A forwarded request carries FORWARDED_HEADER so that it
 * is never forwarded twice (no loops between agents with stale state).
 */
import type { StateReader } from '../../server/state/state-reader.js';
import type { ClientHttpApi } from '../client-http-api.js';
import { HttpError, badRequest } from '../http-errors.js';

/** Marks a request that a server already forwarded to a client. */
export const FORWARDED_HEADER = 'x-caravan-forwarded';

/** The client agent holding an allocation. */
export interface RemoteClient {
  nodeId: string;
  /** Base URL, e.g. "http://10.0.0.5:4646". */
  baseUrl: string;
}

/** Finds the client holding `allocId`; undefined if the allocation or its node is unknown. */
export type AllocLocator = (allocId: string) => RemoteClient | undefined;

/** Builds an AllocLocator over a server's state. */
export function locatorFromState(state: StateReader): AllocLocator {
  return (allocId) => {
    const alloc = state.allocById(allocId);
    if (!alloc || !alloc.NodeID) return undefined;
    const node = state.nodeById(alloc.NodeID);
    if (!node || !node.HTTPAddr) return undefined;
    const addr = node.HTTPAddr;
    return { nodeId: node.ID, baseUrl: /^https?:\/\//.test(addr) ? addr.replace(/\/+$/, '') : `http://${addr}` };
  };
}

/** The answer to "who serves this allocation?". */
export type AllocTarget = { kind: 'local'; client: ClientHttpApi } | { kind: 'remote'; remote: RemoteClient };

/**
 * Decides where a request for `allocId` goes. Throws 404 "Unknown allocation" when neither
 * this client nor (if it is a server, and the request was not already forwarded) the state
 * knows a client for it.
 */
export function resolveAllocTarget(
  allocId: string,
  client: ClientHttpApi | undefined,
  locate: AllocLocator | undefined,
  alreadyForwarded: boolean,
): AllocTarget {
  if (allocId === '') throw badRequest('allocation ID is required');
  if (client?.hasAlloc(allocId)) return { kind: 'local', client };
  if (!alreadyForwarded && locate) {
    const remote = locate(allocId);
    if (remote && (!client || remote.nodeId !== client.nodeId())) return { kind: 'remote', remote };
  }
  throw new HttpError('ALLOC_UNKNOWN', { alloc: allocId, detail: '' });
}
