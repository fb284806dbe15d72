/**
 * `GET /v1/client/allocation/:id/exec` — a command in a running task over a websocket, with
 * Nomad's frame protocol (src/http/exec/exec-frames.ts) — and `GET /v1/job/:job_id/action`, the
 * same session running one of the task's declared `action` blocks (Nomad 1.7+, `nomad action`).
 * The upgrade is taken from the raw HTTP server before fastify routes it; a plain GET is answered
 * 400. Errors found after the upgrade (bad query, unknown task or action) close the socket with
 * the message as reason, as Nomad's agent does, so its Go client shows the text. An open session
 * is held in the agent's live authorizations: when its token is deleted or expires, its command
 * is stopped, frames no longer reach it, and the socket is closed with 1008 and the reason ("ACL
 * token not found").
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import { startExecSession, closeWithError } from '../exec/exec-session.js';
import { parseExecRequest } from '../exec/exec-request.js';
import { parseActionRequest } from '../exec/action-request.js';
import { ClientApiError, ClientApiErrorCode } from '../client-api-error.js';
import type { ClientHttpApi } from '../client-http-api.js';
import { ExecSpawner } from '../exec/exec-spawner.js';
import { forwardWebSocket } from '../forward/ws-forward.js';
import { FORWARDED_BY_CLIENT_HEADER, shouldProxy, type ServerProxy } from '../forward-to-server/server-proxy.js';
import { requestTarget } from '../forward/request-target.js';
import { badRequest, HttpError, toCaravanError } from '../http-errors.js';
import type { RawQuery } from '../query-options.js';
import type { RouteContext } from '../route-context.js';
import { acl, type AclNeed } from '../acl/route-acl.js';
import { permissionDenied, type RequestAcl } from '../acl/acl-gate.js';
import type { LiveGrant } from '../acl/live-authorizations.js';
import { execCapabilities } from '../../acl/exec-capabilities.js';

const EXEC_PATH = /^\/v1\/client\/allocation\/([^/?]+)\/exec\/?$/;
/** A job ID may hold "/" (dispatched and periodic children), so it is everything before "/action". */
const ACTION_PATH = /^\/v1\/job\/(.+)\/action\/?$/;

/**
 * One exec session to start, whichever route asked for it: where, in which task, and how the
 * command is found on the client that runs the task.
 */
interface ExecCall {
  allocId: string;
  task: string;
  tty: boolean;
  /** The command line, asked of the client holding the allocation. */
  command(client: ClientHttpApi): string[];
  /** Capabilities needed beyond the exec's, in the allocation's namespace. */
  alsoNeeds: readonly string[];
}

/** What the upgrade path names: an allocation's exec, or a job's action. */
type ExecRoute = { kind: 'exec'; allocId: string } | { kind: 'action'; jobId: string };

/** Reads the exec call of `route` from the request's query; throws a 400 naming the bad parameter. */
function execCall(route: ExecRoute, query: RawQuery): ExecCall {
  if (route.kind === 'exec') {
    const r = parseExecRequest(query);
    return { allocId: route.allocId, task: r.task, tty: r.tty, command: () => r.command, alsoNeeds: [] };
  }
  const r = parseActionRequest(route.jobId, query);
  return {
    allocId: r.allocId,
    task: r.task,
    tty: r.tty,
    command: (client) => {
      if (!client.taskActionCommand) throw new ClientApiError(ClientApiErrorCode.ActionNotFound, 'this client does not run task actions');
      return client.taskActionCommand(r.allocId, r.jobId, r.task, r.action);
    },
    // Nomad's `nomad action` reads the job to find the action: read-job as well as alloc-exec.
    alsoNeeds: ['read-job'],
  };
}

function queryOf(url: URL): RawQuery {
  const q: RawQuery = {};
  for (const [k, v] of url.searchParams) {
    const prev = q[k];
    q[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return q;
}

/**
 * The server a client-only agent sends an exec for an allocation it does not hold to (the
 * server forwards it on to the client that does); undefined when the exec is answered here.
 */
function proxyServer(ctx: RouteContext, proxy: ServerProxy | undefined, req: IncomingMessage, allocId: string): string | undefined {
  if (ctx.server || !proxy) return undefined;
  const client = ctx.client;
  // Decided as for the allocation's exec route whichever path was asked: an action's path
  // (/v1/job/…) is a server route to shouldProxy, and a forwarded action would bounce back.
  const execPath = `/v1/client/allocation/${encodeURIComponent(allocId)}/exec`;
  if (!shouldProxy(execPath, req.headers, client ? (id) => client.hasAlloc(id) : undefined)) return undefined;
  return proxy.servers()[0];
}

/** What an exec needs: alloc-exec in the allocation's namespace (the route's declaration). */
const EXEC_NEED: AclNeed = { kind: 'namespace', capability: 'alloc-exec', from: 'alloc' };

/**
 * The ACL check of an exec, which is upgraded outside fastify's hooks. The gate checks alloc-exec
 * in the allocation's namespace as for any route; what else the exec needs follows from what the
 * task's driver isolates (execCapabilities: alloc-node-exec without filesystem isolation, as
 * Nomad), which only the client running the task knows. So it is decided here when this agent's
 * client holds the allocation, and otherwise by the agent the request is forwarded to: the
 * client holding it runs this same check with the same token (forwardWebSocket passes it on).
 * Answers the resolved token (undefined with ACLs off), which the session is held with.
 */
async function authorizeExec(ctx: RouteContext, req: IncomingMessage, call: ExecCall, query: RawQuery): Promise<RequestAcl | undefined> {
  const { allocId, task } = call;
  const request = { headers: req.headers, query, params: { id: allocId }, body: null };
  const r = await ctx.gate.authorize(request, EXEC_NEED);
  for (const capability of call.alsoNeeds) await ctx.gate.authorize(request, { kind: 'namespace', capability, from: 'alloc' });
  if (!r || r.acl.isManagement) return r;
  const client = ctx.client;
  if (!client?.hasAlloc(allocId)) return r;
  const namespace = client.allocNamespace?.(allocId);
  const needs = execCapabilities(client.taskDriverCapabilities(allocId, task));
  if (namespace === undefined) throw permissionDenied();
  // Name what is missing: a policy granting alloc-exec is refused an exec into raw_exec, and says why.
  const missing = needs.find((c) => !r.acl.allowNamespaceOperation(namespace, c));
  if (missing !== undefined) throw new HttpError('ACL_CAPABILITY_MISSING', { capability: missing, namespace });
  return r;
}

/** What to do with the exec socket once it is open, decided before the handshake. */
interface ExecPlan {
  run(ws: WebSocket): void;
  /** The handshake failed: undo what the plan started. */
  abort(): void;
  /** The session's token was revoked: stop what `run` started (the command, or the forward's upstream). */
  stop?(): void;
}

const nothingToUndo = (): void => {};

/**
 * Authorizes and validates an exec request, then starts its command (or picks where to forward
 * it) before the websocket handshake is answered, so the spawn overlaps the handshake. Errors
 * are delivered after the upgrade as a close frame, as Nomad's agent does.
 */
async function prepareExec(ctx: RouteContext, proxy: ServerProxy | undefined, spawner: ExecSpawner, req: IncomingMessage, route: ExecRoute, url: URL): Promise<ExecPlan> {
  try {
    const query = queryOf(url);
    const call = execCall(route, query);
    const allocId = call.allocId;
    const granted = await authorizeExec(ctx, req, call, query);
    const server = proxyServer(ctx, proxy, req, allocId);
    if (server !== undefined) {
      const opts = { marker: FORWARDED_BY_CLIENT_HEADER, describe: `server ${server}`, ...(ctx.tls ? { tls: ctx.tls, peer: 'server' as const } : {}) };
      return heldPlan(ctx, granted, forwardPlan((ws) => forwardWebSocket(ws, req, { nodeId: '', baseUrl: server }, opts)));
    }
    const target = requestTarget(ctx, allocId, req.headers);
    if (target.kind === 'remote') {
      return heldPlan(ctx, granted, forwardPlan((ws) => forwardWebSocket(ws, req, target.remote, ctx.tls ? { tls: ctx.tls } : {})));
    }
    const session = startExecSession(target.client.execSpec(allocId, call.task, call.command(target.client)), call.tty, spawner);
    return heldPlan(ctx, granted, { run: (ws) => session.attach(ws), abort: () => session.abort(), stop: () => session.abort() });
  } catch (err) {
    const h = toCaravanError(err);
    if (h.status >= 500) ctx.logger?.error({ err, url: req.url }, 'alloc exec failed');
    return { run: (ws) => closeWithError(ws, h.status, h.message), abort: nothingToUndo };
  }
}

/** A plan that forwards the socket; stopping it drops the upstream connection at once. */
function forwardPlan(forward: (ws: WebSocket) => { terminate(): void }): ExecPlan {
  let upstream: { terminate(): void } | undefined;
  return { run: (ws) => void (upstream = forward(ws)), abort: nothingToUndo, stop: () => upstream?.terminate() };
}

/**
 * Runs `plan` held with the session's token (gate.hold): revoked, the plan is stopped and the
 * socket closed with the reason. Every frame is checked first — this listener runs before the
 * plan's own — so a frame that arrives once the token is known to be gone reaches nothing.
 */
function heldPlan(ctx: RouteContext, granted: RequestAcl | undefined, plan: ExecPlan): ExecPlan {
  return {
    run(ws) {
      let grant: LiveGrant;
      try {
        grant = ctx.gate.hold(granted, (reason) => {
          plan.stop?.();
          closeWithError(ws, reason.status, reason.message);
        });
      } catch (err) {
        // Gone already (deleted between the check and the handshake): nothing more is started.
        plan.abort();
        const h = toCaravanError(err);
        return closeWithError(ws, h.status, h.message);
      }
      ws.on('message', () => void grant.check());
      ws.once('close', () => grant.release());
      plan.run(ws);
    },
    abort: () => plan.abort(),
  };
}

/**
 * True when `req` is a handshake the websocket server will accept (the checks `ws` makes), so a
 * command is never started for a request that cannot become a session.
 */
function acceptableHandshake(req: IncomingMessage): boolean {
  const key = req.headers['sec-websocket-key'];
  const version = req.headers['sec-websocket-version'];
  return (
    req.method === 'GET' &&
    req.headers.upgrade?.toLowerCase() === 'websocket' &&
    typeof key === 'string' &&
    /^[+/0-9A-Za-z]{22}==$/.test(key) &&
    (version === '8' || version === '13')
  );
}

/**
 * Registers the exec route and its websocket upgrade handler on `app`'s HTTP server. A
 * client-only agent passes its `proxy`: execs for allocations it does not hold go to a server.
 */
export function registerClientExecRoutes(app: FastifyInstance, ctx: RouteContext, proxy?: ServerProxy): void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 });
  // Commands are forked from a small helper, not from the agent (see exec-spawner.ts).
  const spawner = new ExecSpawner();

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // This listener runs outside fastify's error handling: a throw here would end the agent, so
    // malformed upgrade requests are answered with a raw 400 instead.
    let url: URL;
    let route: ExecRoute;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
      const m = EXEC_PATH.exec(url.pathname);
      const a = m ? null : ACTION_PATH.exec(url.pathname);
      if (!m && !a) {
        // Another module may own this upgrade; if nobody does, do not leave the socket hanging.
        if (app.server.listenerCount('upgrade') <= 1) socket.destroy();
        return;
      }
      route = m ? { kind: 'exec', allocId: decodeURIComponent(m[1]!) } : { kind: 'action', jobId: decodeURIComponent(a![1]!) };
    } catch (err) {
      rejectUpgrade(socket, `bad exec request: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const upgrade = (plan: ExecPlan): void => {
      let opened = false;
      try {
        // ws answers the handshake and calls back synchronously, or refuses it without a call.
        wss.handleUpgrade(req, socket, head, (ws) => {
          opened = true;
          plan.run(ws);
        });
      } catch (err) {
        ctx.logger?.error({ err, url: req.url }, 'exec upgrade failed');
        rejectUpgrade(socket, 'exec upgrade failed');
      }
      if (!opened) plan.abort();
    };
    if (!acceptableHandshake(req)) {
      // ws refuses it (400); were it accepted after all, the command starts once it is open.
      upgrade({ run: (ws) => void prepareExec(ctx, proxy, spawner, req, route, url).then((plan) => plan.run(ws)), abort: nothingToUndo });
      return;
    }
    void prepareExec(ctx, proxy, spawner, req, route, url).then(upgrade);
  });
  app.addHook('onClose', (_app, done) => {
    for (const ws of wss.clients) ws.terminate();
    wss.close();
    spawner.close();
    done();
  });

  app.get('/v1/client/allocation/:id/exec', acl.ns('alloc-exec', 'alloc'), async () => {
    throw badRequest('alloc exec needs a websocket: send "Connection: Upgrade" and "Upgrade: websocket"');
  });
}

/** Answers a raw upgrade request with 400 and closes the socket. */
function rejectUpgrade(socket: Duplex, message: string): void {
  const body = `${message}\n`;
  socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
