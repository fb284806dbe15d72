/**
 * The event stream's answer for one event: node payloads go through the same view as
 * GET /v1/node/:id, so a node's SecretID leaves the server by neither path; allocation payloads
 * go out without their Job, as Nomad sends them (alloc-views.ts); times as Go writes them.
 */
import type { StreamEvent } from '../../server/events/event.js';
import { allocEventView } from './alloc-views.js';
import { evalView } from './eval-views.js';
import { nodeView } from './node-views.js';

/** The event as /v1/event/stream sends it. */
export function eventView(e: StreamEvent): StreamEvent {
  if ('Allocation' in e.Payload) return { ...e, Payload: { Allocation: allocEventView(e.Payload.Allocation) } };
  if ('Evaluation' in e.Payload) return { ...e, Payload: { Evaluation: evalView(e.Payload.Evaluation) } };
  if (!('Node' in e.Payload)) return e;
  return { ...e, Payload: { Node: nodeView(e.Payload.Node) } };
}
