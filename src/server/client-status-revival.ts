/**
 * The one client status change the server refuses from a client: an allocation whose client
 * status is terminal (complete, failed, lost) reported back to a non-terminal one (pending,
 * running, unknown). The server has already acted on the terminal status — the allocation's
 * resources are free for plans, its job summary counts it finished, a failed one may have a
 * replacement and a reschedule tracker — so a revival would put load on the node outside any
 * plan (over-committing it) and contradict what the scheduler built on. Nomad's state store has
 * no such rule (nestedUpdateAllocFromClient copies ClientStatus as sent); Caravan holds it
 * because a node's SecretID is all a client needs to send one.
 *
 * Not revivals, and so accepted: `unknown` → `running` (a disconnected client reconnecting:
 * `unknown` is not terminal); a terminal status to another terminal one (a `lost` allocation
 * whose client comes back stops it and reports `complete` or `failed`); any report on a
 * non-terminal allocation (a restarted client re-reporting the states it restored).
 */
import { isTerminalClientStatus, type AllocClientStatus, type Allocation } from '../structs/alloc.js';

/**
 * True when a client's report of `next` for an allocation stored as `prev` would revive it.
 * Pure; both the alloc update endpoint (to drop the report before it reaches the log) and the
 * FSM's apply (the allocation may have turned terminal between the two) ask it.
 */
export function revivesTerminalAlloc(prev: Pick<Allocation, 'ClientStatus'>, next: AllocClientStatus): boolean {
  return isTerminalClientStatus(prev.ClientStatus) && !isTerminalClientStatus(next);
}
