/**
 * The agent: composes the server role, the client role and the HTTP API in one process.
 * Start order: server (so the API has state), HTTP (so the client can advertise its address),
 * client. Shutdown runs in reverse; the client's shutdown leaves tasks running, as Nomad's,
 * except in -dev mode, where it destroys every allocation first (Nomad's -dev does too).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createHttpServer, taskApiOf } from '../http/http-server.js';
import { ServerProxy } from '../http/forward-to-server/server-proxy.js';
import type { AgentConfig } from './agent-config.js';
import type { ClientRole, RoleFactories, ServerRole } from './agent-roles.js';
import { lateBoundClient } from './late-bound-client.js';
import { loadAgentTls, type AgentTls } from '../tls/tls-config.js';
import { makePrivateDirSync, privatizeTreeSync } from '../fs/private-dir.js';
import { activeLogPath } from './log-file.js';
import { resolveJobLimits, type JobLimits } from '../server/job-limits.js';

/**
 * Entries of the client's data directory that are not the agent's private state: allocation
 * directories (tasks of the exec driver run as another user inside them) and the task
 * supervisor's directory (owned by the drivers). Both stay unreachable to other users through
 * the private data directory above them.
 */
const CLIENT_SHARED_DIRS: readonly string[] = ['alloc', 'supervisor'];

/**
 * The accept queue asked of the kernel for the HTTP listener: Linux caps it at
 * net.core.somaxconn, which is what a Go listener (Nomad's) gets. Node's default is 511, and
 * thousands of clients connecting while the server's loop is busy (a restart, a large plan)
 * would have their handshakes dropped and retried after 1 s, 3 s, 7 s… — long enough for a
 * heartbeat to miss its grace.
 */
const LISTEN_BACKLOG = 65_535;

/** A running agent. */
export class Agent {
  private stopped = false;

  private constructor(
    readonly config: AgentConfig,
    /** "host:port" the HTTP API listens on. */
    readonly httpAddr: string,
    readonly dataDir: string,
    private readonly http: FastifyInstance,
    private readonly server: ServerRole | undefined,
    private readonly client: ClientRole | undefined,
    private readonly tempDataDir: boolean,
    private readonly logger: Logger,
    /** Outbound TLS connections to close at shutdown (undefined without TLS). */
    private readonly tls: AgentTls | undefined,
  ) {}

  /** The node ID of this agent's client, or "" without a client role. */
  nodeId(): string {
    return this.client?.http.nodeId() ?? '';
  }

  /**
   * Starts every role of `config`. On failure, whatever was started is stopped again before
   * the error is rethrown.
   */
  static async start(config: AgentConfig, roles: RoleFactories, logger: Logger): Promise<Agent> {
    // Read before anything starts: a missing certificate is a configuration error naming it.
    const tls = loadAgentTls(config.tls, config.region);
    const tempDataDir = config.dataDir === undefined;
    const dataDir = config.dataDir ?? (await mkdtemp(join(tmpdir(), 'caravan-dev-')));
    let server: ServerRole | undefined;
    let http: FastifyInstance | undefined;
    let client: ClientRole | undefined;
    try {
      // The agent's state (server log, client state, node secret) is its user's only: tasks
      // of any driver run beside it. An older agent's 0644 files are fixed on start.
      makePrivateDirSync(dataDir);
      const plannedAddr = `${config.bindAddr}:${config.ports.http}`;
      if (config.server.enabled) {
        makePrivateDirSync(join(dataDir, 'server'));
        privatizeTreeSync(join(dataDir, 'server'));
        server = await roles.openServer({
          dataDir: join(dataDir, 'server'),
          region: config.region,
          datacenter: config.datacenter,
          numWorkers: config.server.numSchedulers ?? Math.max(1, availableParallelism()),
          httpAddr: plannedAddr,
          name: config.name,
          ...(config.server.etcd ? { etcd: config.server.etcd } : {}),
          ...(config.server.snapshotThreshold !== undefined ? { snapshotThreshold: config.server.snapshotThreshold } : {}),
          clientIntroduction: config.server.clientIntroduction,
          ...(config.server.oidcIssuer !== undefined ? { oidcIssuer: config.server.oidcIssuer } : {}),
          jobLimits: jobLimitsOf(config.server),
          ...(config.server.heartbeat ? { heartbeat: config.server.heartbeat } : {}),
          logger: logger.child({ component: 'server' }),
        });
        if (config.server.clientIntroduction.enforcement === 'strict' && !config.acl.enabled) {
          // Minting an introduction token needs node:write; without ACLs anyone who reaches the API has it.
          logger.warn({}, 'client_introduction enforcement is "strict" but ACLs are off: anyone who reaches the API can mint an introduction token');
        }
      }
      const lateClient = config.client.enabled ? lateBoundClient() : undefined;
      http = createHttpServer({
        ...(server ? { server: server.api } : {}),
        ...(lateClient ? { client: lateClient.api } : {}),
        // A client-only agent answers the whole API: server routes go to its servers.
        ...(!server && config.client.enabled && config.client.servers.length > 0
          ? { serverProxy: new ServerProxy({ servers: config.client.servers, ...(tls ? { tls: tls.outbound } : {}) }) }
          : {}),
        ...(tls ? { tls } : {}),
        logger: logger.child({ component: 'http' }),
        acl: config.acl,
        agent: {
          name: config.name,
          region: config.region,
          datacenter: config.datacenter,
          httpAddr: plannedAddr,
          server: config.server.enabled,
          client: config.client.enabled,
          config: agentConfigJson(config, dataDir),
          enableDebug: config.enableDebug,
          ...(config.logFile ? { logFile: activeLogPath(config.logFile) } : {}),
        },
      });
      await http.listen({ host: config.bindAddr, port: config.ports.http, backlog: LISTEN_BACKLOG });
      const httpAddr = listeningAddress(http, config.bindAddr);
      server?.advertise(advertiseAddress(httpAddr));
      if (config.client.enabled && lateClient) {
        makePrivateDirSync(join(dataDir, 'client'));
        // Allocation directories keep their modes (exec tasks run as another user in them).
        privatizeTreeSync(join(dataDir, 'client'), CLIENT_SHARED_DIRS);
        // Tasks get the API on their secrets/api.sock, served by this agent's HTTP server.
        const taskApi = taskApiOf(http);
        client = await roles.startClient({
          dataDir: join(dataDir, 'client'),
          // A client beside a server calls it in-process, unless the server is one of several
          // (etcd): then over HTTP through its own agent, which forwards to the leader when a follower.
          ...(server && !config.server.etcd
            ? { inProcess: server.api }
            : { servers: server ? [advertiseAddress(httpAddr), ...config.client.servers] : config.client.servers, ...(tls ? { tls: tls.outbound } : {}) }),
          nodeName: config.name,
          datacenter: config.datacenter,
          region: config.region,
          httpAddr: advertiseAddress(httpAddr),
          nodeClass: config.client.nodeClass,
          nodePool: config.client.nodePool,
          ...(config.client.introToken !== undefined ? { introToken: config.client.introToken } : {}),
          meta: config.client.meta,
          options: config.client.options,
          plugins: config.plugins,
          ...(config.client.chrootEnv ? { chrootEnv: config.client.chrootEnv } : {}),
          ...(config.client.network ? { network: config.client.network } : {}),
          ...(config.client.hostVolumes ? { hostVolumes: config.client.hostVolumes } : {}),
          ...(taskApi ? { taskApi } : {}),
          // Nomad's defaults, beside (not in) the client's directory, whose tree is made private at start.
          hostVolumesDir: config.client.hostVolumesDir ?? join(dataDir, 'host_volumes'),
          hostVolumePluginDir: config.client.hostVolumePluginDir ?? join(dataDir, 'host_volume_plugins'),
          logger: logger.child({ component: 'client' }),
        });
        lateClient.bind(client.http);
      }
      return new Agent(config, httpAddr, dataDir, http, server, client, tempDataDir, logger, tls);
    } catch (err) {
      await client?.shutdown().catch(() => undefined);
      await http?.close().catch(() => undefined);
      await server?.close().catch(() => undefined);
      tls?.outbound.close();
      if (tempDataDir) await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
  }

  /** Graceful shutdown: client (tasks keep running, unless -dev), HTTP, server. Idempotent. */
  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const step = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        this.logger.error({ err }, `shutdown of ${name} failed`);
      }
    };
    // A -dev agent destroys its allocations, as Nomad's does: nothing it started outlives it.
    if (this.client) await step('client', () => this.client!.shutdown({ destroyAllocs: this.config.dev }));
    await step('http', () => this.http.close());
    if (this.server) await step('server', () => this.server!.close());
    this.tls?.outbound.close();
    // A temporary data dir (no -data-dir) is removed once no task of it is left to reattach:
    // it holds their logs, so a client's stays unless that client destroyed its allocations.
    if (this.tempDataDir && (!this.client || this.config.dev)) await step('data dir', () => rm(this.dataDir, { recursive: true, force: true }));
  }
}

/** The address fastify actually bound ("host:port"), so port 0 resolves to the real port. */
function listeningAddress(http: FastifyInstance, bindAddr: string): string {
  const addr = http.server.address();
  if (addr && typeof addr === 'object') return `${bindAddr.includes(':') ? `[${bindAddr}]` : bindAddr}:${addr.port}`;
  return bindAddr;
}

/** What a client advertises to servers: the bind address, or loopback when bound to all. */
function advertiseAddress(httpAddr: string): string {
  return httpAddr.replace(/^0\.0\.0\.0:/, '127.0.0.1:');
}

/** The configuration as /v1/agent/self shows it (Nomad's field names). */
/** The job limits the server block sets; 0 for job_max_priority or job_default_priority means the default, as Nomad's. */
function jobLimitsOf(s: AgentConfig['server']): Partial<JobLimits> {
  const limits: Partial<JobLimits> = {};
  if (s.jobMaxCount !== undefined) limits.maxCount = s.jobMaxCount;
  if (s.jobMaxPriority) limits.maxPriority = s.jobMaxPriority;
  if (s.jobDefaultPriority) limits.defaultPriority = s.jobDefaultPriority;
  return limits;
}

/** The job limits in effect, under Nomad's names (JobMaxCount, JobMaxPriority, JobDefaultPriority). */
function jobLimitsJson(s: AgentConfig['server']): Record<string, number> {
  const l = resolveJobLimits(jobLimitsOf(s));
  return { JobMaxCount: l.maxCount, JobMaxPriority: l.maxPriority, JobDefaultPriority: l.defaultPriority };
}

function agentConfigJson(c: AgentConfig, dataDir: string): Record<string, unknown> {
  return {
    Region: c.region,
    Datacenter: c.datacenter,
    NodeName: c.name,
    DataDir: dataDir,
    BindAddr: c.bindAddr,
    LogLevel: c.logLevel.toUpperCase(),
    LogJson: c.logJson,
    LogFile: c.logFile ?? '',
    LogRotateBytes: c.logRotateBytes,
    LogRotateDuration: `${c.logRotateDurationMs / 1000}s`,
    LogRotateMaxFiles: c.logRotateMaxFiles,
    EnableDebug: c.enableDebug,
    DevMode: c.dev,
    // Servers are reached over HTTP: Caravan listens on no RPC or gossip (Serf) port.
    Ports: { HTTP: c.ports.http, RPC: 0, Serf: 0 },
    Server: { Enabled: c.server.enabled, NumSchedulers: c.server.numSchedulers, ...jobLimitsJson(c.server) },
    Client: {
      Enabled: c.client.enabled,
      Servers: c.client.servers,
      NodeClass: c.client.nodeClass,
      NodePool: c.client.nodePool,
      Meta: c.client.meta,
      Options: c.client.options,
    },
    Files: c.files,
    // The sections Nomad's clients read: the web UI shows ACL controls when ACL.Enabled, and
    // reads UI and Telemetry; TTLs go out as Go durations (nanoseconds).
    ACL: { Enabled: c.acl.enabled, TokenTTL: c.acl.tokenTtlMs * 1e6, PolicyTTL: c.acl.policyTtlMs * 1e6, RoleTTL: c.acl.policyTtlMs * 1e6 },
    // Caravan serves Nomad's web UI itself (/ui), without Consul or Vault links.
    UI: { Enabled: true, Consul: { BaseUIURL: '' }, Vault: { BaseUIURL: '' }, Label: null },
    // Metrics are always collected; /v1/metrics answers JSON or, with ?format=prometheus, Prometheus text.
    Telemetry: { PrometheusMetrics: true, CollectionInterval: '1s', DisableHostname: false, PublishAllocationMetrics: true, PublishNodeMetrics: true },
    Consuls: [],
    Vaults: [],
  };
}
