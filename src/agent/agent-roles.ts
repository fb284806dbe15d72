/**
 * The two roles an agent composes, as the agent sees them: a server (state, scheduling, the
 * API behind the HTTP layer) and a client (runs tasks). Factories are injected so tests can
 * compose an agent from fakes; `defaultRoles` (default-roles.ts) binds the real Server and
 * Client.
 */
import type { TaskApiConnections } from '../client/taskrunner/hooks/task-api-hook.js';
import { CaravanError, type CaravanErrorOptions } from '../structs/caravan-error.js';
import type { Logger } from 'pino';
import type { ClientHttpApi } from '../http/client-http-api.js';
import type { OutboundTls } from '../tls/tls-config.js';
import type { ServerApi } from '../server/server-api.js';
import type { EtcdConfig } from '../server/etcd/etcd-connection.js';
import type { ClientIntroductionConfig } from '../structs/client-introduction.js';
import type { JobLimits } from '../server/job-limits.js';
import type { ClientConfig, HeartbeatSettings, HostVolumeConfig } from './agent-config.js';

/** What the agent asks of a server it opened. */
export interface ServerRole {
  readonly api: ServerApi;
  /** Sets the address the server answers as leader and peer: the agent's real HTTP address, once it listens. */
  advertise(addr: string): void;
  /** Stops leader duties and workers and closes the log; acknowledged writes are durable. */
  close(): Promise<void>;
}

/** What the agent asks of a client it started. */
export interface ClientRole {
  readonly http: ClientHttpApi;
  /**
   * Stops the client but leaves its tasks running (Nomad's agent shutdown); with
   * `destroyAllocs` (a -dev agent) destroys every allocation and leaves no process behind.
   */
  shutdown(opts?: { destroyAllocs?: boolean }): Promise<void>;
}

/** Options for opening the server role. */
export interface OpenServerOptions {
  dataDir: string;
  region: string;
  datacenter: string;
  numWorkers: number;
  /** The HTTP address this agent listens on, "host:port". */
  httpAddr: string;
  /** The agent's name: the server's ID and name among the servers. */
  name: string;
  /** Keep the log and leadership in etcd (several servers) instead of the embedded SQLite log. */
  etcd?: EtcdConfig;
  /** Log entries between state snapshots (raft_snapshot_threshold). */
  snapshotThreshold?: number;
  /** Heartbeat tuning from the server block (heartbeat_grace, min_heartbeat_ttl, …). */
  heartbeat?: HeartbeatSettings;
  /** The `client_introduction` block. */
  clientIntroduction?: ClientIntroductionConfig;
  /** `oidc_issuer`: the issuer of workload identities (undefined: none). */
  oidcIssuer?: string;
  /** job_max_count, job_max_priority, job_default_priority as configured (Nomad's defaults for the rest). */
  jobLimits?: Partial<JobLimits>;
  logger: Logger;
}

/** Options for starting the client role; exactly one of `servers` and `inProcess` is set. */
export interface StartClientOptions {
  dataDir: string;
  servers?: string[];
  /** Mutual TLS to `servers` (the agent's `tls { rpc }`). */
  tls?: OutboundTls;
  inProcess?: ServerApi;
  nodeName: string;
  datacenter: string;
  region: string;
  httpAddr: string;
  nodeClass: string;
  /** The node pool the node registers in. */
  nodePool?: string;
  /** The introduction token presented at the first registration (else read from `<dataDir>/intro_token.jwt`). Secret. */
  introToken?: string;
  meta: Record<string, string>;
  options: Record<string, string>;
  /** Bodies of `plugin "<name>" { config { … } }` blocks, by plugin name. */
  plugins?: Record<string, Record<string, unknown>>;
  /** `client { chroot_env }` for the exec driver. */
  chrootEnv?: Record<string, string>;
  /** Group networking options (bridge_network_*, cni_path, cni_config_dir). */
  network?: ClientConfig['network'];
  /** `client { host_volume "<name>" { … } }` blocks, fingerprinted into the node. */
  hostVolumes?: Record<string, HostVolumeConfig>;
  /** The agent's Task API, served on each task's `secrets/api.sock`. */
  taskApi?: TaskApiConnections;
  /** `client { host_volumes_dir }` and `{ host_volume_plugin_dir }` for dynamic host volumes. */
  hostVolumesDir?: string;
  hostVolumePluginDir?: string;
  logger: Logger;
}

/** How an agent creates its roles. */
export interface RoleFactories {
  openServer(opts: OpenServerOptions): Promise<ServerRole>;
  startClient(opts: StartClientOptions): Promise<ClientRole>;
}

/** Raised when a role cannot be started; the agent exits with its message. */
export class AgentRoleError extends CaravanError<'AGENT_ROLE_UNAVAILABLE'> {
  constructor(
    readonly role: 'server' | 'client',
    reason: string,
    options?: CaravanErrorOptions,
  ) {
    super('AGENT_ROLE_UNAVAILABLE', { reason }, options);
    this.name = 'AgentRoleError';
  }
}
