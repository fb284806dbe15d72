/**
 * What a server is opened with: its data dir and identity, and the overrides tests and
 * benchmarks use (clock, log backend, schedulers, snapshot, heartbeat and broker tuning).
 */
import type pino from 'pino';
import type { SchedulerFactory } from '../scheduler/interfaces.js';
import type { Clock, RandomSource } from '../time/clock.js';
import type { JobLimits } from './job-limits.js';
import type { Leadership } from './leadership/leadership.js';
import type { LogBackend } from './log/log-backend.js';
import type { SnapshotStats } from './snapshot/snapshot-writer.js';
import type { ClientIntroductionConfig } from '../structs/client-introduction.js';

/** How to open a server. Fields after `advertiseAddr` are overrides for tests and benchmarks. */
export interface ServerConfig {
  dataDir: string;
  region?: string;
  /** Nomad's `oidc_issuer`: the `iss` of workload identities and the OIDC discovery document's issuer ("" or absent: none). */
  oidcIssuer?: string;
  datacenter?: string;
  numWorkers?: number;
  /** The agent's job_max_count, job_max_priority and job_default_priority (job-limits.ts); Nomad's defaults when absent. */
  jobLimits?: Partial<JobLimits>;
  /**
   * The most new allocations one plan places; the rest of a job's count is placed by follow-up
   * evaluations, so no evaluation holds more than this many placements. Default 2,000.
   */
  maxPlacementsPerPlan?: number;
  clock?: Clock;
  logger?: pino.Logger;
  nodeName?: string;
  /** The `client_introduction` block; Nomad's defaults (enforcement "warn") when absent. */
  clientIntroduction?: ClientIntroductionConfig;
  /** The address to answer as leader and peer until `advertise` sets the real one. */
  advertiseAddr?: string;
  /** Scheduler lookup; defaults to schedulerFactoryFor from src/scheduler/index.ts. */
  schedulerFactory?: (type: string) => SchedulerFactory | undefined;
  /** A log backend instead of SQLite in dataDir. */
  logBackend?: LogBackend;
  /**
   * Who leads the cluster (etcd's election with several servers); by default this server alone,
   * always the leader (EmbeddedLeadership). Started by Server.open, closed by Server.close.
   */
  leadership?: Leadership;
  random?: RandomSource;
  /** Log entries between state snapshots. Default 8192. */
  snapshotThreshold?: number;
  /** Rows per snapshot chunk. Default 2000. */
  snapshotRowsPerChunk?: number;
  /** Called after each snapshot is committed (benchmarks, metrics). */
  onSnapshot?: (stats: SnapshotStats) => void;
  /**
   * Heartbeat tuning (Nomad's min_heartbeat_ttl, max_heartbeats_per_second, heartbeat_grace) and
   * failoverTtlMs: how long a new leader gives every live node before it counts a heartbeat as
   * missed (Nomad's failover_heartbeat_ttl, default 5 min).
   */
  heartbeat?: { minTtlMs?: number; maxHeartbeatsPerSecond?: number; graceMs?: number; failoverTtlMs?: number };
  /** The window (ms) in which clients' allocation reports are batched into one log entry while an earlier batch is being applied (Nomad's 50 ms, always). */
  allocUpdateBatchMs?: number;
  broker?: { nackTimeoutMs?: number; deliveryLimit?: number; initialNackDelayMs?: number; subsequentNackDelayMs?: number };
  /** Delay before the follow-up of a failed eval (ms). Default 60 s. */
  failedFollowUpDelayMs?: number;
  eventBufferSize?: number;
  /** How often the leader collects garbage (ms). Default 5 min; 0 disables. */
  gcIntervalMs?: number;
  /** Age after which terminal evals of dead jobs are collected (ms). Default 1 h. */
  gcThresholdMs?: number;
}
