/**
 * What an endpoint module sees of its server: the state to read, the write path, the clock, and
 * the leader's duties where a request touches them (a node's heartbeat timer). Endpoints hold no
 * state of their own; the server (src/server/server.ts) builds one context and hands it to each.
 */
import type { SchedulerFactory } from '../../scheduler/interfaces.js';
import type { Clock, RandomSource } from '../../time/clock.js';
import type { Command } from '../fsm/commands.js';
import type { ServerConfig } from '../server-config.js';
import type { StateStore } from '../state/state-store.js';
import type { VariableLockTimers } from '../leader/variable-lock-timers.js';

export type FactoryLookup = (type: string) => SchedulerFactory | undefined;

export interface EndpointContext {
  readonly config: ServerConfig;
  readonly store: StateStore;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly factoryFor: FactoryLookup;
  /** Proposes a command; resolves with its index once durable and applied (NOT_LEADER on a follower). */
  apply(cmd: Command): Promise<number>;
  /**
   * Starts (or restarts) a node's heartbeat timer on the leader; answers the TTL (ms) the client
   * must heartbeat within. NOT_LEADER on a follower.
   */
  resetHeartbeat(nodeId: string): number;
  /** The leader's variable lock timers; NOT_LEADER on a follower. */
  variableLocks(): VariableLockTimers;
  /** Stops a node's heartbeat timer (the node went down); nothing on a follower. */
  clearHeartbeat(nodeId: string): void;
  /** The clock in Unix nanoseconds, as commands carry it. */
  nowNanos(): number;
}
