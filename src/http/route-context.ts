/**
 * What every route module receives: the server and client of this agent (either may be
 * absent), time and randomness, and helpers to answer reads and
 * writes with Nomad's headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OutboundTls } from '../tls/tls-config.js';
import type { Logger } from 'pino';
import type { ServerApi } from '../server/server-api.js';
import type { Table } from '../server/state/state-reader.js';
import type { Clock, RandomSource } from '../time/clock.js';
import type { ClientHttpApi } from './client-http-api.js';
import type { HttpMetrics } from './http-metrics.js';
import { blockingQuery } from './blocking-query.js';
import { onAbort } from './abort-fanout.js';
import { permissionDenied, requestAcl, type AclGate } from './acl/acl-gate.js';
import { UNHELD } from './acl/live-authorizations.js';
import { HttpError } from './http-errors.js';
import { applyListOptions, listShapeOf, parseListOptions } from './list-options.js';
import { parseQueryOptions, type QueryOptions, type RawHeaders, type RawQuery } from './query-options.js';

/** Static facts about the agent serving the API, for /v1/agent/* and /v1/status/*. */
export interface AgentInfo {
  name: string;
  region: string;
  datacenter: string;
  version: string;
  /** The address the HTTP API listens on, "host:port". */
  httpAddr: string;
  server: boolean;
  client: boolean;
  /** The agent's effective configuration, shown by /v1/agent/self. */
  config: Record<string, unknown>;
  /** `enable_debug`: with ACLs off, the pprof routes answer only when set (Nomad's rule). */
  enableDebug?: boolean;
  /** The active file of `log_file`, which /v1/agent/monitor/export?on_disk=true reads; undefined without one. */
  logFile?: string;
}

/** Shared state of the route modules. */
export interface RouteContext {
  server: ServerApi | undefined;
  client: ClientHttpApi | undefined;
  agent: AgentInfo;
  clock: Clock;
  random: RandomSource;
  logger: Logger | undefined;
  metrics: HttpMetrics;
  /** Aborted when the HTTP server closes: long waits and streams should end. */
  shutdown: AbortController;
  /** The ACL gate: decides every request against its route's declaration (acl/acl-gate.ts). */
  gate: AclGate;
  /** Mutual TLS for calls to other agents (forwards to clients and servers); undefined without TLS. */
  tls?: OutboundTls;
}

/** The server of this agent; a 400 explaining the agent is client-only when there is none. */
export function requireServer(ctx: RouteContext): ServerApi {
  if (!ctx.server) throw new HttpError('HTTP_NO_SERVER', {});
  return ctx.server;
}

/** The query options of a request (400 on bad index/wait). */
export function queryOptions(req: FastifyRequest): QueryOptions {
  return parseQueryOptions(req.query as RawQuery, req.headers as RawHeaders);
}

/** A signal that aborts when the HTTP client goes away before the answer is sent, or on shutdown. */
export function requestSignal(req: FastifyRequest, reply: FastifyReply, shutdown?: AbortSignal): AbortSignal {
  const ac = new AbortController();
  if (shutdown) {
    if (shutdown.aborted) ac.abort(shutdown.reason);
    else {
      // Fanned out: thousands of held queries on one shutdown signal (see abort-fanout.ts).
      const unsubscribe = onAbort(shutdown, () => ac.abort(shutdown.reason));
      reply.raw.once('close', unsubscribe);
    }
  }
  const socket = req.raw.socket;
  const onClose = () => {
    // Keep-alive sockets outlive requests: drop the socket listener once this answer is done.
    socket?.removeListener('close', onClose);
    if (!reply.raw.writableFinished) ac.abort(new Error('client closed the connection'));
  };
  socket?.once('close', onClose);
  reply.raw.once('close', onClose);
  return ac.signal;
}

/** Sends a JSON body, indented with 4 spaces when `?pretty` was asked for (as Nomad). */
export function sendJson(reply: FastifyReply, body: unknown, pretty: boolean, status = 200): FastifyReply {
  const text = JSON.stringify(body ?? null, null, pretty ? 4 : undefined);
  return reply.code(status).header('Content-Type', 'application/json').send(pretty ? text + '\n' : text);
}

/**
 * Sets Nomad's query-meta headers: X-Nomad-Index, and from `server` whether it knows a leader
 * (X-Nomad-KnownLeader) and how long ago it heard from it in ms (X-Nomad-LastContact, 0 on the leader).
 */
export function setQueryMeta(reply: FastifyReply, index: number, server?: ServerApi): void {
  reply.header('X-Nomad-Index', String(index));
  const knownLeader = !server || server.isLeader() || server.leaderAddress() !== '';
  reply.header('X-Nomad-KnownLeader', knownLeader ? 'true' : 'false');
  reply.header('X-Nomad-LastContact', String(server?.isLeader() === false ? Math.max(0, Math.round(server.lastContactMs?.() ?? 0)) : 0));
}

/**
 * Answers a read: blocks as the query asks on `tables` (or the tables a function of the query's
 * options names: a read of one job waits on that job of the request's namespace), runs `read`, sets the query-meta
 * headers and sends the JSON. A read of one object passes `indexOf` (see blockingQuery): it
 * waits for that object and answers its index. `read` throwing (e.g. a 404) is answered by the error handler,
 * with the index header still set. A list answer is filtered and paged here, for every list
 * route alike (list-options.ts): `filter`, `per_page`, `next_token`, `reverse`. A query that
 * blocks is held with its token: deleted, expired or no longer allowed while it waits, it is
 * answered 403 at once, never with the data.
 */
export async function answerRead<T>(
  ctx: RouteContext,
  req: FastifyRequest,
  reply: FastifyReply,
  tables: Table[] | ((opts: QueryOptions) => Table[]),
  read: (server: ServerApi, opts: QueryOptions) => T,
  indexOf?: (value: T) => number,
): Promise<FastifyReply> {
  const server = requireServer(ctx);
  const opts = queryOptions(req);
  // Parsed before blocking, so a malformed filter is a 400 at once, not after the wait.
  const listOpts = parseListOptions(req.query as RawQuery);
  const revoked = new AbortController();
  const grant = opts.index > 0 ? ctx.gate.holdRequest(req, reply, (reason) => revoked.abort(reason)) : UNHELD;
  const gone = requestSignal(req, reply, ctx.shutdown.signal);
  const signal = grant === UNHELD ? gone : AbortSignal.any([gone, revoked.signal]);
  let index = 0;
  try {
    const watched = typeof tables === 'function' ? tables(opts) : tables;
    const result = await blockingQuery({ server, clock: ctx.clock, random: ctx.random }, watched, opts, () => read(server, opts), signal, indexOf);
    if (!grant.check()) throw permissionDenied();
    grant.release();
    index = result.index;
    setQueryMeta(reply, index, server);
    let body: unknown = result.value;
    // Read before keepReadable copies the list (the mark is on the route's array).
    const shape = listShapeOf(body);
    if (Array.isArray(body)) body = keepReadable(req, body);
    if (Array.isArray(body)) {
      const page = applyListOptions(body as unknown[], listOpts, shape);
      body = page.items;
      if (page.nextToken !== '') reply.header('X-Nomad-NextToken', page.nextToken);
    }
    return sendJson(reply, body, opts.pretty);
  } catch (err) {
    if (index === 0) setQueryMeta(reply, Math.max(1, server.state.latestIndex()), server);
    throw err;
  }
}

/**
 * With ACLs on, a namespace-scoped list keeps the items of the namespaces where the token has
 * the capability its route declared (a `?namespace=*` list, or a list that spans namespaces).
 */
function keepReadable(req: FastifyRequest, items: unknown[]): unknown[] {
  const r = requestAcl(req);
  const cap = r?.listCapability;
  if (!r || !cap || r.acl.isManagement) return items;
  return items.filter((x) => {
    const ns = (x as { Namespace?: unknown } | null)?.Namespace;
    return typeof ns !== 'string' || r.acl.allowNamespaceOperation(ns, cap);
  });
}

/** Answers a write with its index header and JSON body. */
export function answerWrite(req: FastifyRequest, reply: FastifyReply, index: number, body: unknown): FastifyReply {
  reply.header('X-Nomad-Index', String(Math.max(1, index)));
  const pretty = (req.query as RawQuery)['pretty'] !== undefined;
  return sendJson(reply, body, pretty);
}

/** The index of one object read: its ModifyIndex (blocking queries on it wait for it). */
export const modifyIndex = (o: { ModifyIndex: number }): number => o.ModifyIndex;
