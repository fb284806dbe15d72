/**
 * The event stream's answer for one event: node payloads go through the same view as
 * GET /v1/node/:id, so a node's SecretID leaves the server by neither path.
 */
import type { StreamEvent } from '../../server/events/event.js';
import { nodeView } from './node-views.js';

/** The event as /v1/event/stream sends it. */
export function eventView(e: StreamEvent): StreamEvent {
  if (!('Node' in e.Payload)) return e;
  const node = nodeView(e.Payload.Node);
  return node === e.Payload.Node ? e : { ...e, Payload: { Node: node } };
}
