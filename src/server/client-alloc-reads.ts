/**
 * What a client reads of its node's allocations, as Nomad's client does: first the IDs with
 * their AllocModifyIndex (Node.GetClientAllocs), then the full allocations of only the IDs whose
 * index moved past what the client holds (Alloc.GetAllocs). A node with K allocations then
 * receives one allocation per change instead of all K with their jobs (O(K²) over a deployment).
 * Both reads are the node's own: authenticated by its SecretID, and a fetch never yields an
 * allocation placed on another node. Shared by the HTTP routes and the in-process connection.
 */
import type { Allocation } from '../structs/alloc.js';
import type { StateReader } from './state/state-reader.js';
import { authenticateNode } from './endpoints/node-endpoint.js';
import { ServerError } from './server-error.js';

/**
 * The most allocation IDs one fetch may name: bounds the work and the answer of one request (a
 * client with more changed allocations fetches them in several requests).
 */
export const MAX_ALLOC_IDS_PER_FETCH = 500;

/** An allocation ID is a UUID in practice; longer strings are refused before any lookup. */
const MAX_ALLOC_ID_LENGTH = 64;

/** The node's allocations as ID → AllocModifyIndex (Nomad's NodeClientAllocsResponse.Allocs). */
export type ClientAllocIndexes = Record<string, number>;

/**
 * Checks that `secretId` is the SecretID of node `nodeId`: NODE_NOT_FOUND (404, the client
 * registers again) or NODE_SECRET_MISMATCH (403).
 */
export function authenticateNodeRead(state: StateReader, nodeId: string, secretId: string): void {
  const node = state.nodeById(nodeId);
  if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
  authenticateNode(node, secretId);
}

/**
 * The node's allocations, by ID, with the index at which each last changed. A prototype-less
 * object: V8 keeps it as a dictionary, where a `{}` gave every allocation ID a hidden class of
 * its own (10,000 new classes when a system job's plan wakes every node's watch, ~10× the cost of
 * the answer's index map). Serialised and read (Object.hasOwn, Object.keys) the same.
 */
export function clientAllocIndexes(state: StateReader, nodeId: string): ClientAllocIndexes {
  const out = Object.create(null) as ClientAllocIndexes;
  for (const a of state.allocsByNode(nodeId)) out[a.ID] = a.AllocModifyIndex;
  return out;
}

/**
 * The list of allocation IDs a fetch names (`field` in the body): an array of at most
 * MAX_ALLOC_IDS_PER_FETCH non-empty strings. CLIENT_REPORT_INVALID (400) names the field.
 */
export function admitAllocIds(raw: unknown, field = 'AllocIDs'): string[] {
  if (!Array.isArray(raw)) throw new ServerError('CLIENT_REPORT_INVALID', { reason: `${field} must be a list of allocation IDs` });
  if (raw.length > MAX_ALLOC_IDS_PER_FETCH) {
    throw new ServerError('CLIENT_REPORT_INVALID', { reason: `${field} names ${raw.length} allocations; at most ${MAX_ALLOC_IDS_PER_FETCH} per request` });
  }
  raw.forEach((id, i) => {
    if (typeof id !== 'string' || id === '' || id.length > MAX_ALLOC_ID_LENGTH) {
      throw new ServerError('CLIENT_REPORT_INVALID', { reason: `${field}[${i}] must be an allocation ID (a non-empty string of at most ${MAX_ALLOC_ID_LENGTH} characters)` });
    }
  });
  return raw as string[];
}

/**
 * The named allocations that are on node `nodeId`. An ID unknown or placed on another node is
 * left out alike (the client treats what it does not get as gone at its next listing), so a
 * node learns nothing of other nodes' allocations, not even whether an ID exists.
 */
export function clientAllocsByIds(state: StateReader, nodeId: string, ids: readonly string[]): Allocation[] {
  const out: Allocation[] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    const a = state.allocById(id);
    if (a && a.NodeID === nodeId) out.push(a);
  }
  return out;
}
