/**
 * Node heartbeat timers. Each heartbeat resets a node's TTL timer; a node that misses it is
 * reported to onExpire (the server marks it down). The TTL follows Nomad's rule: the larger of
 * the minimum TTL and the node count divided by the allowed heartbeats per second, plus a
 * random stagger up to the same amount; the timer allows a grace period on top.
 */
import type { Clock, RandomSource, Timer } from '../../time/clock.js';

export interface HeartbeaterConfig {
  clock: Clock;
  random: RandomSource;
  /** Called once when a node misses its TTL. */
  onExpire: (nodeId: string) => void;
  /** Nomad's min_heartbeat_ttl. Default 10 s. */
  minTtlMs?: number;
  /** Nomad's max_heartbeats_per_second. Default 50. */
  maxHeartbeatsPerSecond?: number;
  /** Extra time before a missed TTL counts (Nomad's heartbeat_grace). Default 10 s. */
  graceMs?: number;
}

/** Per-node TTL timers. */
export class Heartbeater {
  private readonly timers = new Map<string, Timer>();
  private readonly minTtlMs: number;
  private readonly maxPerSecond: number;
  private readonly graceMs: number;
  private enabled = true;

  constructor(private readonly config: HeartbeaterConfig) {
    this.minTtlMs = config.minTtlMs ?? 10_000;
    this.maxPerSecond = config.maxHeartbeatsPerSecond ?? 50;
    this.graceMs = config.graceMs ?? 10_000;
  }

  /** The TTL to give a node now (ms), before stagger: the rule at `nodes` nodes (default: those tracked). */
  baseTtlMs(nodes = this.timers.size): number {
    return Math.max(this.minTtlMs, (Math.max(1, nodes) / this.maxPerSecond) * 1000);
  }

  /**
   * The longest a client of a `nodes`-node cluster may have been told to wait before its next
   * heartbeat, with the grace: the TTL rule fully staggered. A new leader holds no node for less
   * (see `hold`), or a node whose TTL outlasts the failover TTL would be marked down for a
   * heartbeat it was never due to send.
   */
  longestWaitMs(nodes: number): number {
    return 2 * this.baseTtlMs(nodes) + this.graceMs;
  }

  /** Resets (or starts) a node's timer; returns the TTL (ms) the client must heartbeat within. */
  reset(nodeId: string): number {
    const base = this.baseTtlMs();
    const ttl = Math.round(base + this.config.random() * base);
    this.timers.get(nodeId)?.cancel();
    if (!this.enabled) return ttl;
    const timer = this.config.clock.setTimer(ttl + this.graceMs, () => {
      if (this.timers.get(nodeId) !== timer) return;
      this.timers.delete(nodeId);
      this.config.onExpire(nodeId);
    });
    this.timers.set(nodeId, timer);
    return ttl;
  }

  /**
   * Gives a node `ms` to heartbeat before it counts as missed, with no stagger or grace: a new
   * leader's grace for every live node (Nomad's failover heartbeat TTL), so a leader change
   * marks nothing down while clients find the new leader.
   */
  hold(nodeId: string, ms: number): void {
    this.timers.get(nodeId)?.cancel();
    if (!this.enabled) return;
    const timer = this.config.clock.setTimer(ms, () => {
      if (this.timers.get(nodeId) !== timer) return;
      this.timers.delete(nodeId);
      this.config.onExpire(nodeId);
    });
    this.timers.set(nodeId, timer);
  }

  /** Stops tracking a node (deregistered or already down). */
  clear(nodeId: string): void {
    this.timers.get(nodeId)?.cancel();
    this.timers.delete(nodeId);
  }

  /** Whether a node has a live timer. */
  tracking(nodeId: string): boolean {
    return this.timers.has(nodeId);
  }

  /** Number of tracked nodes. */
  size(): number {
    return this.timers.size;
  }

  /** Cancels every timer; later resets only compute TTLs. */
  stop(): void {
    this.enabled = false;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
  }
}
