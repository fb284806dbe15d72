/**
 * When a client heartbeats next, as Nomad's client does: after exactly the TTL the server gave
 * it. The spreading is the server's: it sizes the TTL to the node count (N / max_heartbeats_per_second)
 * and adds a random stagger of up to as much again (heartbeater.ts), and it allows
 * heartbeat_grace past the TTL before counting a heartbeat as missed. A client that also
 * shortened the TTL would undo that sizing and send the leader more than
 * max_heartbeats_per_second.
 */

/** The wait (ms) before the next heartbeat after a successful one that answered `ttlMs`. */
export function heartbeatWaitMs(ttlMs: number): number {
  return Math.max(0, ttlMs);
}
