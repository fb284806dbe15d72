/**
 * Nomad never lets a node's SecretID leave the server through the event stream (its Node
 * events carry `Node.Sanitize()`); this strips it the same way before events are buffered.
 */
import type { StreamEvent } from './event.js';

/** Returns `e` with any Node payload's SecretID blanked (a copy; the state's object is untouched). */
export function sanitizeEvent(e: StreamEvent): StreamEvent {
  if (!('Node' in e.Payload)) return e;
  const node = e.Payload.Node;
  if (!node.SecretID) return e;
  return { ...e, Payload: { Node: { ...node, SecretID: '' } } };
}
