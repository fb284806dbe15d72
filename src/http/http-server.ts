/**
 * The HTTP API of an agent: Nomad's /v1 routes on fastify. Server routes need `server`;
 * client routes (exec, fs, logs, stats in routes/client-*.ts) need `client`. Every error is answered as Nomad does — a
 * status code and a plain-text body — and none crashes the process.
 */
import { ERROR_CODE_HEADER } from '../structs/error-catalogue.js';
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { TLSSocket } from 'node:tls';
import type { AgentTls } from '../tls/tls-config.js';
import { tlsFetch } from '../tls/tls-fetch.js';
import type { ServerApi } from '../server/server-api.js';
import { systemClock, type Clock, type RandomSource } from '../time/clock.js';
import type { ClientHttpApi } from './client-http-api.js';
import { HttpError, toCaravanError } from './http-errors.js';
import { HttpMetrics } from './http-metrics.js';
import { CARAVAN_VERSION } from '../structs/version.js';
import { queryParam, type RawQuery } from './query-options.js';
import { parseJsonBody } from './request-body.js';
import type { AgentInfo, RouteContext } from './route-context.js';
import { registerAgentRoutes } from './routes/agent.js';
import { registerAllocRoutes } from './routes/allocs.js';
import { registerEvalRoutes } from './routes/evals.js';
import { registerInternalRoutes } from './routes/internal.js';
import { registerNodeAllocWatchRoutes } from './routes/node-alloc-watch.js';
import { registerJobRoutes } from './routes/jobs.js';
import { registerJobStatusesRoutes } from './routes/job-statuses.js';
import { registerSystemRoutes } from './routes/system.js';
import { registerSchedulerConfigRoutes } from './routes/scheduler-config.js';
import { registerFeaturesOffRoutes } from './routes/features-off.js';
import { registerAgentHostRoutes } from './routes/agent-host.js';
import { registerAgentSchedulerRoutes } from './routes/agent-schedulers.js';
import { registerHostVolumeRoutes } from './routes/host-volumes.js';
import { registerClientIdentityRoutes } from './routes/client-identity.js';
import { registerWorkloadIdentityKeyringRoutes } from './routes/workload-identity-keyring.js';
import { registerMetricsRoutes } from './routes/metrics.js';
import { registerNodeRoutes } from './routes/nodes.js';
import { registerNodePoolRoutes } from './routes/node-pools.js';
import { registerJobValidateRoutes } from './routes/job-validate.js';
import { registerVariableRoutes } from './routes/variables.js';
import { registerAgentMonitorRoutes } from './routes/agent-monitor.js';
import { registerServiceRoutes } from './routes/services.js';
import { registerOperatorSnapshotRoutes } from './routes/operator-snapshot.js';
import { registerNodeDrainRoutes } from './routes/node-drain.js';
import { registerDeploymentRoutes } from './routes/deployments.js';
import { registerNamespaceRoutes } from './routes/namespaces.js';
import { registerOperatorRoutes } from './routes/operator.js';
import { registerScalingPolicyRoutes } from './routes/scaling-policies.js';
import { registerAutopilotRoutes } from './routes/autopilot.js';
import { registerAllocServiceRoutes } from './routes/alloc-services.js';
import { registerAgentMembershipRoutes } from './routes/agent-membership.js';
import { registerAgentKeyringRoutes } from './routes/agent-keyring.js';
import { registerAgentPprofRoutes } from './routes/agent-pprof.js';
import { registerAgentMonitorExportRoutes } from './routes/agent-monitor-export.js';
import { registerOperatorRaftPeerRoutes } from './routes/operator-raft-peers.js';
import { registerSearchRoutes } from './routes/search.js';
import { registerStatusRoutes } from './routes/status.js';
import { registerClientAllocRoutes } from './routes/client-alloc.js';
import { registerClientNodeRoutes } from './routes/client-node.js';
import { registerClientExecRoutes } from './routes/client-exec.js';
import { registerClientFsRoutes } from './routes/client-fs.js';
import { registerClientLogsRoutes } from './routes/client-logs.js';
import { registerEventStreamRoutes } from './routes/event-stream.js';
import { registerUiRoutes } from './routes/ui.js';
import { registerUiTopologyRoutes } from './routes/ui-topology.js';
import { shouldProxy, type ServerProxy } from './forward-to-server/server-proxy.js';
import { AclGate, type AclLookups } from './acl/acl-gate.js';
import { declaredNeed, type AclNeed } from './acl/route-acl.js';
import { RemoteTokenResolver } from './acl/remote-token-resolver.js';
import { LiveAuthorizations } from './acl/live-authorizations.js';
import { polledTokenSource, stateTokenSource } from './acl/token-watch-sources.js';
import { registerAclRoutes } from './routes/acl.js';
import { registerClientIntroductionRoutes } from './routes/client-introduction.js';
import { LeaderForwarder, awayFrom, routeToLeader, type LeaderRoute } from './forward-to-leader/leader-forward.js';
import { DEFAULT_LEADER_HOLD_MS, LeaderHold, waitsForLeader } from './forward-to-leader/leader-hold.js';
import { ServerError } from '../server/server-error.js';
import { TaskApiServer } from './task-api/task-api-server.js';

/** Options of createHttpServer. */
export interface HttpServerOptions {
  server?: ServerApi;
  client?: ClientHttpApi;
  logger?: Logger;
  /** Facts about the agent for /v1/agent/*; sensible defaults for tests. */
  agent?: Partial<AgentInfo>;
  clock?: Clock;
  random?: RandomSource;
  /** Largest accepted request body in bytes (default 16 MiB; job files can be large). */
  bodyLimit?: number;
  /** A client-only agent's way to its servers: server routes are proxied through it. Ignored with `server`. */
  serverProxy?: ServerProxy;
  /** The agent's TLS (`tls { http = true … }`): HTTPS, and mutual TLS to other agents. */
  tls?: AgentTls;
  /** The built web UI served at /ui/ (default dist/ui). */
  uiDir?: string;
  /** The agent's `acl` block: with `enabled`, every route is checked against the caller's token. */
  acl?: { enabled: boolean; tokenTtlMs?: number; policyTtlMs?: number };
  /** How long a server without a (ready) leader holds a request before refusing it (Nomad's RPCHoldTimeout, default 5 s). */
  leaderHoldMs?: number;
}

/** Builds the fastify instance with every route; the caller listens (or uses inject in tests). */
export function createHttpServer(opts: HttpServerOptions): FastifyInstance {
  const fastifyOpts = {
    bodyLimit: opts.bodyLimit ?? 16 * 1024 * 1024,
    logController: new LogController({ disableRequestLogging: true }),
    // Nomad's job IDs may contain characters fastify would otherwise reject in params.
    routerOptions: { maxParamLength: 2048, ignoreTrailingSlash: true },
    // Long-lived streams (logs, events, exec) must not hold a shutdown open.
    forceCloseConnections: true,
    ...(opts.logger ? { loggerInstance: opts.logger as FastifyBaseLogger } : {}),
  };
  // HTTPS with the agent's `tls` block; routes see the same request and reply either way.
  const app: FastifyInstance = opts.tls ? (fastify({ ...fastifyOpts, https: opts.tls.server }) as unknown as FastifyInstance) : fastify(fastifyOpts);
  const agent: AgentInfo = {
    name: 'caravan',
    region: 'global',
    datacenter: 'dc1',
    version: CARAVAN_VERSION,
    httpAddr: '127.0.0.1:4646',
    server: opts.server !== undefined,
    client: opts.client !== undefined,
    config: {},
    ...opts.agent,
  };
  // Answers carry the address actually listened on (port 0 resolves to the real port).
  const configuredAddr = agent.httpAddr;
  Object.defineProperty(agent, 'httpAddr', { enumerable: true, get: () => listenAddress(app, configuredAddr) });
  const clock = opts.clock ?? systemClock;
  const ctx: RouteContext = {
    server: opts.server,
    client: opts.client,
    agent,
    clock,
    random: opts.random ?? Math.random,
    logger: opts.logger,
    metrics: new HttpMetrics(() => opts.server),
    shutdown: new AbortController(),
    gate: createAclGate(opts, clock),
    ...(opts.tls ? { tls: opts.tls.outbound } : {}),
  };
  // On close, blocked queries answer at once and streams end, so shutdown does not wait minutes.
  app.addHook('preClose', (done) => {
    ctx.shutdown.abort(new Error('agent shutting down'));
    ctx.gate.live?.close();
    done();
  });

  // Every body is JSON whatever its content type: Nomad's clients do not always send one.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // A client-only agent answers server routes by proxying them, before any body is parsed.
  const proxy = opts.server ? undefined : opts.serverProxy;
  if (proxy) {
    app.addHook('onRequest', (req, reply, done) => {
      if (!shouldProxy(req.url, req.headers, opts.client ? (id) => opts.client!.hasAlloc(id) : undefined)) return done();
      reply.hijack();
      void proxy.proxy(req.raw, reply.raw);
    });
    app.addHook('onClose', (_app, done) => {
      proxy.close();
      done();
    });
  }

  // A follower sends writes (and reads without ?stale) to the leader, before any body is parsed.
  const server = opts.server;
  if (server) {
    const forwarder = new LeaderForwarder(opts.tls?.outbound);
    // During an election (or a new leader's catch-up) a request waits for the leader, as Nomad's
    // servers hold an RPC; it is answered early if the caller goes or the agent shuts down.
    const hold = new LeaderHold(clock, opts.leaderHoldMs ?? DEFAULT_LEADER_HOLD_MS, ctx.shutdown.signal);
    app.addHook('onRequest', (req, reply, done) => {
      const kind = req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write';
      const decide = () => routeToLeader(req.method, req.url, req.headers, server);
      // Held while no leader is known; resolves once the caller left or the agent shuts down too.
      const held = (route: () => LeaderRoute): Promise<LeaderRoute> => {
        const gone = new AbortController();
        const onGone = () => gone.abort();
        reply.raw.once('close', onGone);
        return hold.wait(route, gone.signal, kind).finally(() => reply.raw.off('close', onGone));
      };
      // The named leader refused the connection (dead, its lease not lapsed yet): wait for
      // another, or for this server to lead (then the request is replayed to this server).
      const nextLeader = async (tried: Set<string>): Promise<string | undefined> => {
        const r = await held(() => awayFrom(decide(), tried));
        const to = r.kind === 'leader' ? r.address : r.kind === 'local' ? server.leaderAddress() : '';
        if (to === '' || tried.has(to)) return undefined;
        tried.add(to);
        return to;
      };
      const act = (route: LeaderRoute): void => {
        if (route.kind === 'local') return done();
        if (route.kind === 'no-leader') return done(new ServerError('NO_LEADER', {}));
        if (route.kind === 'not-ready') return done(new ServerError('NOT_READY_FOR_CONSISTENT_READS', {}));
        reply.hijack();
        const tried = new Set([route.address]);
        void forwarder.forward(req.raw, reply.raw, route.address, () => nextLeader(tried));
      };
      const route = decide();
      if (!waitsForLeader(route)) return act(route);
      void held(decide).then(act);
    });
    app.addHook('onClose', (_app, done) => {
      forwarder.close();
      done();
    });
  }

  // With tls.rpc, the client ↔ server routes take only callers whose certificate the CA signed.
  if (opts.tls?.config.rpc) {
    app.addHook('onRequest', (req, _reply, done) => {
      const path = req.url.split('?', 1)[0] ?? '';
      if (path.startsWith('/v1/internal/') && !hasVerifiedPeer(req.raw.socket as TLSSocket)) return done(new HttpError('HTTP_CLIENT_CERT_REQUIRED', { path }));
      done();
    });
  }

  // `region=` names where a request should go: this agent serves its own region only.
  app.addHook('onRequest', (req, _reply, done) => {
    const region = queryParam(req.query as RawQuery, 'region');
    if (region !== undefined && region !== '' && region !== agent.region) return done(new HttpError('HTTP_NO_REGION_PATH', { region }));
    done();
  });

  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unknown';
    ctx.metrics.observe(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  app.setErrorHandler((err, req, reply) => {
    const h = toCaravanError(err);
    if (h.status >= 500) ctx.logger?.error({ err, url: req.url }, 'HTTP request failed');
    else ctx.logger?.debug({ url: req.url, status: h.status, msg: h.message }, 'HTTP request rejected');
    // The code travels too, so HTTP callers (Caravan's clients) match by code, never by status or text.
    return reply.code(h.status).header('Content-Type', 'text/plain; charset=utf-8').header(ERROR_CODE_HEADER, h.code).send(h.message);
  });
  app.setNotFoundHandler(async () => {
    throw new HttpError('HTTP_ROUTE_NOT_FOUND', {});
  });

  // Every route declares what it needs of the caller's token (route-acl.ts); the gate decides.
  const declarations: RouteDeclaration[] = [];
  routeDeclarations.set(app, declarations);
  app.addHook('onRoute', (route) => {
    declarations.push({ method: route.method, url: route.url, need: declaredNeed(route.config) });
  });
  app.addHook('preHandler', async (req) => {
    await ctx.gate.check(req, declaredNeed(req.routeOptions.config));
  });

  registerJobRoutes(app, ctx);
  registerJobStatusesRoutes(app, ctx);
  registerSystemRoutes(app, ctx);
  registerSchedulerConfigRoutes(app, ctx);
  registerFeaturesOffRoutes(app, ctx);
  if (ctx.gate.enabled) registerAclRoutes(app, ctx);
  registerClientIntroductionRoutes(app, ctx);
  registerAgentHostRoutes(app, ctx);
  registerAgentSchedulerRoutes(app, ctx);
  registerHostVolumeRoutes(app, ctx);
  registerClientIdentityRoutes(app, ctx);
  registerWorkloadIdentityKeyringRoutes(app, ctx);
  registerAllocRoutes(app, ctx);
  registerEvalRoutes(app, ctx);
  registerNodeRoutes(app, ctx);
  registerNodePoolRoutes(app, ctx);
  registerJobValidateRoutes(app, ctx);
  registerVariableRoutes(app, ctx);
  registerAgentMonitorRoutes(app, ctx);
  registerServiceRoutes(app, ctx);
  registerOperatorSnapshotRoutes(app, ctx);
  registerNodeDrainRoutes(app, ctx);
  registerDeploymentRoutes(app, ctx);
  registerStatusRoutes(app, ctx);
  registerAgentRoutes(app, ctx);
  registerSearchRoutes(app, ctx);
  registerNamespaceRoutes(app, ctx);
  registerOperatorRoutes(app, ctx);
  registerScalingPolicyRoutes(app, ctx);
  registerAutopilotRoutes(app, ctx);
  registerAllocServiceRoutes(app, ctx);
  registerAgentMembershipRoutes(app, ctx);
  registerAgentKeyringRoutes(app, ctx);
  registerAgentPprofRoutes(app, ctx);
  registerAgentMonitorExportRoutes(app, ctx);
  registerOperatorRaftPeerRoutes(app, ctx);
  registerMetricsRoutes(app, ctx);
  registerInternalRoutes(app, ctx);
  registerNodeAllocWatchRoutes(app, ctx);
  registerEventStreamRoutes(app, ctx);
  // Client routes serve local allocations and, on a server, forward to the client holding one.
  registerClientExecRoutes(app, ctx, proxy);
  registerClientFsRoutes(app, ctx);
  registerClientLogsRoutes(app, ctx);
  registerClientAllocRoutes(app, ctx);
  registerClientNodeRoutes(app, ctx);
  registerUiTopologyRoutes(app, ctx);
  registerUiRoutes(app, opts.uiDir);
  taskApis.set(app, createTaskApi(app, opts));
  return app;
}

const taskApis = new WeakMap<FastifyInstance, TaskApiServer>();

/** The Task API of an app made by createHttpServer: what tasks' `secrets/api.sock` connections are handed to. */
export function taskApiOf(app: FastifyInstance): TaskApiServer | undefined {
  return taskApis.get(app);
}

/**
 * The Task API resolves every token, ACLs on or off: on a server from its state, on a
 * client-only agent through its servers (which must have ACLs on to answer).
 */
function createTaskApi(app: FastifyInstance, opts: HttpServerOptions): TaskApiServer {
  const server = opts.server;
  const remote = !server && opts.serverProxy ? new RemoteTokenResolver(opts.serverProxy.servers(), opts.acl?.tokenTtlMs ?? 30_000, opts.tls ? tlsFetch({ agent: opts.tls.outbound.serverAgent }) : fetch) : undefined;
  const taskApi = new TaskApiServer(app, () => server?.acl ?? remote, opts.logger);
  app.addHook('onClose', (_app, done) => {
    taskApi.close();
    done();
  });
  return taskApi;
}

/** One route as registered, with what it declared (undefined: nothing). */
export interface RouteDeclaration {
  method: string | string[];
  url: string;
  need: AclNeed | undefined;
}

const routeDeclarations = new WeakMap<FastifyInstance, RouteDeclaration[]>();

/** Every route of an app made by createHttpServer, with its ACL declaration (for the test that requires one). */
export function routeAclDeclarations(app: FastifyInstance): RouteDeclaration[] {
  return routeDeclarations.get(app) ?? [];
}

/**
 * The gate of an agent: the server resolves tokens from its state; lookups find objects'
 * namespaces. Its live connections are re-checked as the server's ACL tables change, or on a
 * client-only agent by asking the servers again (token-watch-sources.ts).
 */
function createAclGate(opts: HttpServerOptions, clock: Clock): AclGate {
  const server = opts.server;
  const lookups: AclLookups | undefined = server
    ? {
        allocNamespace: (id) => server.state.allocById(id)?.Namespace,
        evalNamespace: (id) => server.state.evalById(id)?.Namespace,
        deploymentNamespace: (id) => server.state.deploymentById(id)?.Namespace,
        nodeSecret: (id) => server.state.nodeById(id)?.SecretID,
      }
    : opts.client
      ? {
          allocNamespace: (id) => opts.client?.allocNamespace?.(id),
          evalNamespace: () => undefined,
          deploymentNamespace: () => undefined,
          nodeSecret: () => undefined,
        }
      : undefined;
  const remote = !server && opts.serverProxy && opts.acl?.enabled ? new RemoteTokenResolver(opts.serverProxy.servers(), opts.acl.tokenTtlMs ?? 30_000, opts.tls ? tlsFetch({ agent: opts.tls.outbound.serverAgent }) : fetch) : undefined;
  const serverAcl = server?.acl;
  const source = serverAcl && server ? stateTokenSource(server, serverAcl) : remote ? polledTokenSource(remote, clock) : undefined;
  const live = opts.acl?.enabled === true && source ? new LiveAuthorizations(source, clock, (err) => opts.logger?.debug({ err }, 're-checking the tokens of live connections failed')) : undefined;
  return new AclGate(opts.acl?.enabled === true, () => server?.acl ?? remote, lookups, live);
}

/**
 * True when the caller presented a certificate the CA signed. A resumed TLS session reports
 * `authorized` without any peer certificate, so the certificate itself must be there too.
 */
function hasVerifiedPeer(socket: TLSSocket): boolean {
  return socket.authorized && Object.keys(socket.getPeerCertificate() ?? {}).length > 0;
}

/** "host:port" of the listening socket, the host as configured; `configured` before listen. */
function listenAddress(app: FastifyInstance, configured: string): string {
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') return configured;
  const colon = configured.lastIndexOf(':');
  return `${colon > 0 ? configured.slice(0, colon) : configured}:${addr.port}`;
}
