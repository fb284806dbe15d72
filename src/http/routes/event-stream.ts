/**
 * `GET /v1/event/stream?index=N&topic=Job:*&topic=Allocation:abc&namespace=ns` — the server's
 * events as newline-delimited JSON: `{"Index":N,"Events":[…]}` per log index, each written and
 * flushed as it happens, and a `{}` heartbeat every 10 s while idle. The subscription ends when
 * the client disconnects; a reader too slow to keep up is dropped with an `{"Error":…}` frame.
 *
 * With ACLs on, the stream is held in the agent's live authorizations: when its token is deleted,
 * or its policies change so that it may read nothing the subscription asks for, it is closed with
 * Nomad's `subscription closed by server, client should resubscribe`; when the token expires,
 * with `ACL token expired` (Nomad's ErrSubscriptionClosed and ErrTokenExpired). Narrower
 * permissions that still read something narrow the stream's filter instead.
 */
import { eventView } from '../api-views/event-views.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SubscribeRequest } from '../../server/events/event-broker.js';
import type { EventBatch, EventTopic, StreamEvent } from '../../server/events/event.js';
import type { Acl } from '../../acl/acl.js';
import type { CaravanError } from '../../structs/caravan-error.js';
import { requestAcl } from '../acl/acl-gate.js';
import type { LiveGrant } from '../acl/live-authorizations.js';
import { badRequest, HttpError } from '../http-errors.js';
import { queryParam, type RawQuery } from '../query-options.js';
import { requireServer, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Nomad's event stream heartbeat interval. */
export const EVENT_HEARTBEAT_MS = 10_000;

/** How long a reader may leave the socket full before it is dropped. */
export const EVENT_SLOW_READER_MS = 30_000;

/** Resolves true once `raw` drains, false when it closes or stays full for `ms`. */
function drained(raw: NodeJS.WritableStream & { destroyed: boolean }, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      raw.removeListener('drain', onDrain);
      raw.removeListener('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    const timer = setTimeout(() => done(false), ms);
    timer.unref();
    raw.once('drain', onDrain);
    raw.once('close', onClose);
  });
}

/** What the route needs of the broker (EventBroker satisfies it). */
export interface EventSubscriber {
  subscribe(req: SubscribeRequest): AsyncIterable<EventBatch>;
}

/** The topic filter of the stream, as the broker takes it. */
export type TopicFilter = Map<EventTopic | '*', string[]>;

/**
 * Parses the `topic` parameters ("Topic:Key", "Topic" = "Topic:*", "*:*" = all); no parameter
 * means every topic. Throws a 400 naming the malformed topic.
 */
export function parseTopics(raw: string | string[] | undefined): TopicFilter | undefined {
  if (raw === undefined) return undefined;
  const list = Array.isArray(raw) ? raw : [raw];
  const out: TopicFilter = new Map();
  for (const t of list) {
    const parts = t.split(':');
    if (parts.length > 2 || parts[0] === '' || (parts.length === 2 && parts[1] === '')) {
      throw badRequest(`invalid value for "topic": ${JSON.stringify(t)} (want Topic:Key, e.g. Job:* or Allocation:<id>)`);
    }
    const topic = parts[0] as EventTopic | '*';
    const key = parts.length === 2 ? parts[1]! : '*';
    const keys = out.get(topic) ?? [];
    if (!keys.includes(key)) keys.push(key);
    out.set(topic, keys);
  }
  return out;
}

/** The parsed subscription of a request (without its signal). */
export function parseSubscribeRequest(q: RawQuery): SubscribeRequest {
  const rawIndex = queryParam(q, 'index');
  let index = 0;
  if (rawIndex !== undefined && rawIndex !== '') {
    if (!/^\d+$/.test(rawIndex)) throw badRequest(`invalid value for "index": ${JSON.stringify(rawIndex)} (want a non-negative integer)`);
    index = Number(rawIndex);
  }
  const topics = parseTopics(q.topic);
  const namespace = queryParam(q, 'namespace') || 'default';
  return { index, namespace, ...(topics ? { topics } : {}) };
}

/** How a stream is ended from outside: its token was revoked (see the file comment). */
export interface StreamRevocation {
  /** Aborted with the error the closing frame carries. */
  signal: AbortSignal;
  /** Checked before each batch is sent (an expired token sends nothing more). */
  grant: LiveGrant;
}

/**
 * Streams `subscriber`'s batches for `req` into `reply` until either side ends, or until
 * `revocation` ends it with an error frame.
 */
export async function streamEvents(
  request: FastifyRequest,
  reply: FastifyReply,
  subscriber: EventSubscriber,
  req: SubscribeRequest,
  heartbeatMs = EVENT_HEARTBEAT_MS,
  slowReaderMs = EVENT_SLOW_READER_MS,
  keep?: (e: StreamEvent) => boolean,
  revocation?: StreamRevocation,
): Promise<void> {
  const ac = new AbortController();
  const revoked = revocation?.signal;
  if (revoked?.aborted) ac.abort();
  else revoked?.addEventListener('abort', () => ac.abort(), { once: true });
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache' });
  raw.flushHeaders();
  raw.on('close', () => ac.abort());
  request.raw.on('close', () => {
    if (!raw.writableFinished) ac.abort();
  });
  const heartbeat = setInterval(() => {
    if (!raw.destroyed) raw.write('{}');
  }, heartbeatMs);
  heartbeat.unref();
  try {
    for await (const full of subscriber.subscribe({ ...req, signal: ac.signal })) {
      if (raw.destroyed || (revocation && !revocation.grant.check())) break;
      // With ACLs on, a batch keeps the events the token may read; one left empty is not sent.
      const batch = keep ? { ...full, Events: full.Events.filter(keep) } : full;
      if (batch.Events.length === 0) continue;
      // Respect backpressure: while the socket is full the subscription stops consuming, so a
      // slow reader lags in the broker's ring (and is cut off there) instead of in our memory.
      if (!raw.write(JSON.stringify({ ...batch, Events: batch.Events.map(eventView) })) && !(await drained(raw, slowReaderMs))) {
        raw.destroy();
        break;
      }
    }
  } catch (err) {
    // A subscriber that fell behind is cut off with an error frame, as Nomad does; the client
    // reconnects from its last index.
    request.log?.warn?.({ err }, 'event stream ended');
    if (!raw.destroyed) raw.write(JSON.stringify({ Error: (err as Error).message }));
  } finally {
    clearInterval(heartbeat);
    ac.abort();
  }
  if (revoked?.aborted && !raw.destroyed) raw.write(JSON.stringify({ Error: (revoked.reason as Error).message }));
  if (!raw.destroyed) raw.end();
}

/**
 * Which events the permissions `perms()` give may read, as Nomad filters its stream: events of a
 * namespace need read-job there, node events node:read; undefined (all) with ACLs off.
 */
function readableEvents(perms: (() => Acl) | undefined): ((e: StreamEvent) => boolean) | undefined {
  if (!perms) return undefined;
  return (e) => {
    const acl = perms();
    if (acl.isManagement) return true;
    if (e.Topic === 'Node') return acl.allowNodeRead();
    // Nomad's HostVolume topic is read with host-volume-read in the volume's namespace.
    if (e.Topic === 'HostVolume') return acl.allowNamespaceOperation(e.Namespace, 'host-volume-read');
    if (e.Namespace) return acl.allowNamespaceOperation(e.Namespace, 'read-job');
    return false;
  };
}

/**
 * Whether `acl` may read anything `sub` asks for (Nomad's aclAllowsSubscription, loosened as
 * Caravan filters rather than refuses): read-job in its namespace for the namespaced topics,
 * node:read for Node events.
 */
export function subscriptionReadable(acl: Acl, sub: SubscribeRequest): boolean {
  if (acl.isManagement) return true;
  const ns = sub.namespace ?? 'default';
  const jobs = ns === '*' ? acl.allowsAnywhere('read-job') : acl.allowNamespaceOperation(ns, 'read-job');
  const topics = sub.topics ? [...sub.topics.keys()] : ['*'];
  const volumes = ns === '*' ? acl.allowsAnywhere('host-volume-read') : acl.allowNamespaceOperation(ns, 'host-volume-read');
  return topics.some((t) => (t === 'Node' ? acl.allowNodeRead() : t === 'HostVolume' ? volumes : t === '*' ? jobs || volumes || acl.allowNodeRead() : jobs));
}

/** The closing frame's error for a revoked subscription, in Nomad's words. */
function subscriptionClosed(reason: CaravanError): HttpError {
  return reason.code === 'ACL_TOKEN_EXPIRED' ? new HttpError('ACL_TOKEN_EXPIRED', {}) : new HttpError('ACL_SUBSCRIPTION_CLOSED', {});
}

/** Registers the event stream route; it needs a server with an event broker. */
export function registerEventStreamRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/event/stream', acl.filtered(), async (req: FastifyRequest<{ Querystring: RawQuery }>, reply) => {
    const server = requireServer(ctx);
    const subReq = parseSubscribeRequest(req.query);
    const broker = server.eventBroker;
    if (!broker) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'the event stream' });
    const r = requestAcl(req);
    let perms = r?.acl;
    const revoked = new AbortController();
    const grant = ctx.gate.holdRequest(req, reply, (reason) => revoked.abort(subscriptionClosed(reason)), (acl) => {
      if (!subscriptionReadable(acl, subReq)) return false;
      perms = acl;
      return true;
    });
    try {
      await streamEvents(req, reply, broker, subReq, EVENT_HEARTBEAT_MS, EVENT_SLOW_READER_MS, readableEvents(perms ? () => perms! : undefined), { signal: revoked.signal, grant });
    } finally {
      grant.release();
    }
  });
}
