/**
 * How a client-only agent answers server routes: every /v1 request that is not the client's
 * own (see `isLocalRoute`) is proxied unchanged — method, path, query string, headers (the
 * ACL token included) and body — to one of the configured servers, and the answer streams back
 * as it comes, so blocking queries and the event stream work through the client. Nomad's
 * clients do the same over RPC.
 *
 * Failover: the proxy prefers the last server that answered; when a server cannot be reached
 * (connection refused, reset, or no connection within `connectTimeoutMs`) before it answered,
 * the request is replayed to the next one. Only when none answers does the caller get a 503
 * naming every server and its error. A server that answered (with any status) is not retried:
 * its answer is the answer.
 *
 * A caller may also be told when every server failed before any of the request reached it
 * (`ProxyCall.whenUnreachable`: the connection was refused, reset or timed out before it was
 * made): it may then name another server to replay the kept body to — nothing reached the
 * first, so a write cannot be applied twice. A request whose connection was made (a reused
 * keep-alive socket counts) may have reached the server and is never offered for that.
 */
import { ErrorCatalogue } from '../../structs/error-catalogue.js';
import { FORWARDED_HEADER } from '../forward/alloc-target.js';
import { request as httpsRequest } from 'node:https';
import { withScheme, type OutboundTls } from '../../tls/tls-config.js';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';

/** The error code of a request no server answered. */
export const NO_SERVER_REACHABLE = 'HTTP_NO_SERVER_REACHABLE';

/** Marks a request a client agent forwarded to a server (for logs and loop checks). */
export const FORWARDED_BY_CLIENT_HEADER = 'x-caravan-forwarded-by-client';

/** Request headers that describe one hop and are not passed on (content-length is kept: the bytes are the same). */
const HOP_REQUEST_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'te', 'trailer']);
/** Response headers that describe one hop. */
const HOP_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'trailer']);

/** Options of a ServerProxy. */
export interface ServerProxyOptions {
  /** Server addresses: "host:port" or http(s) URLs. */
  servers: string[];
  /** How long to wait for a TCP connection before trying the next server (default 5 s). */
  connectTimeoutMs?: number;
  /** Request bytes kept for a replay to the next server (default 16 MiB); a bigger body is not replayed. */
  maxReplayBytes?: number;
  /** The header marking the requests this proxy forwards (default FORWARDED_BY_CLIENT_HEADER). */
  markHeader?: string;
  /** Who failed to reach the servers, for the 503's text (default "this client agent"). */
  who?: string;
  /** Mutual TLS to the servers (the agent's `tls { rpc }`): https, the agent's certificate presented. */
  tls?: OutboundTls;
}

/** How one request is proxied, when the proxy's own servers are not what it goes to. */
export interface ProxyCall {
  /** The servers to try for this request, in order, instead of the proxy's own. */
  servers?: string[];
  /** Who failed to reach them, for the 503's text (default: the proxy's `who`). */
  who?: string;
  /**
   * Called when the last server tried failed before any of the request reached it and the body
   * is kept: resolves with another server to replay it to, or undefined to answer the 503. It may
   * wait (for a new leader); the exchange ends meanwhile if the caller leaves.
   */
  whenUnreachable?: () => Promise<string | undefined>;
}

/**
 * True for routes a client-only agent answers itself: its own allocations (/v1/client/…),
 * its own facts, health, host, servers and scheduler workers (/v1/agent/self, /health, /host, /servers,
 * /schedulers: a client-only agent answers "Server only endpoint" as Nomad), its profiles and log
 * (/v1/agent/pprof/*, /v1/agent/monitor, /v1/agent/monitor/export) and its metrics. Everything
 * else under /v1/ belongs to the servers.
 */
export function isLocalRoute(url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  if (!path.startsWith('/v1/')) return true;
  return (
    path.startsWith('/v1/client/') ||
    path === '/v1/agent/self' ||
    path === '/v1/agent/health' ||
    path === '/v1/agent/host' ||
    path === '/v1/agent/servers' ||
    path.startsWith('/v1/agent/schedulers') ||
    // The agent's own profiles and log (a server named by ?server_id= is reached from here).
    path.startsWith('/v1/agent/pprof/') ||
    path.startsWith('/v1/agent/monitor') ||
    path === '/v1/metrics'
  );
}

/** The allocation a client route is about (/v1/client/allocation/:id/…, /v1/client/fs/:op/:alloc), if any. */
export function clientRouteAllocId(url: string): string | undefined {
  const path = url.split('?', 1)[0] ?? '';
  const m = /^\/v1\/client\/(?:allocation|fs\/[a-z]+)\/([^/]+)/.exec(path);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/**
 * Whether a client-only agent proxies a request to its servers: every server route, and a
 * client route about an allocation this client does not hold (the server forwards it on to
 * the client that does). A request another agent already forwarded is never proxied again.
 * `hasAlloc` may throw (client still starting): the request is then answered locally.
 */
export function shouldProxy(url: string, headers: IncomingHttpHeaders, hasAlloc: ((id: string) => boolean) | undefined): boolean {
  if (!isLocalRoute(url)) return true;
  if (headers[FORWARDED_HEADER] !== undefined || headers[FORWARDED_BY_CLIENT_HEADER] !== undefined || !hasAlloc) return false;
  const allocId = clientRouteAllocId(url);
  if (allocId === undefined || allocId === '') return false;
  try {
    return !hasAlloc(allocId);
  } catch {
    return false;
  }
}

/** Copies the headers of `h` except those in `drop`. */
function copyHeaders(h: IncomingHttpHeaders, drop: Set<string>): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !drop.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** One failed attempt, for the final error message. */
interface Attempt {
  server: string;
  error: string;
}

/** Proxies requests to servers with failover (see the file comment). One per agent. */
export class ServerProxy {
  private readonly bases: string[];
  private preferred = 0;
  private readonly agent: HttpAgent;
  private readonly tls: OutboundTls | undefined;
  private readonly connectTimeoutMs: number;
  private readonly maxReplayBytes: number;
  private readonly markHeader: string;
  private readonly who: string;

  constructor(opts: ServerProxyOptions) {
    this.markHeader = opts.markHeader ?? FORWARDED_BY_CLIENT_HEADER;
    this.who = opts.who ?? 'this client agent';
    this.tls = opts.tls;
    this.bases = opts.servers.map((s) => this.base(s));
    this.agent = opts.tls ? opts.tls.serverAgent : new HttpAgent({ keepAlive: true, maxSockets: Infinity });
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    this.maxReplayBytes = opts.maxReplayBytes ?? 16 * 1024 * 1024;
  }

  /** A server address ("host:port" or an http(s) URL) as a base URL. */
  private base(server: string): string {
    return withScheme(/^https?:\/\//.test(server) ? server.replace(/\/+$/, '') : `http://${server}`, this.tls !== undefined);
  }

  /** The server base URLs, preferred first. */
  servers(): string[] {
    return [...this.bases.slice(this.preferred), ...this.bases.slice(0, this.preferred)];
  }

  /**
   * Proxies `req` (whose body has not been read) and writes the answer into `res`. Resolves
   * when the exchange is over: answered, failed with a 503, or abandoned by the caller.
   */
  proxy(req: IncomingMessage, res: ServerResponse, call: ProxyCall = {}): Promise<void> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let replayable = true;
      let bodyDone = false;
      let current: ClientRequest | null = null;
      let answered = false;
      let finished = false;
      const attempts: Attempt[] = [];
      const order = call.servers ? call.servers.map((s) => this.base(s)) : this.servers();
      const who = call.who ?? this.who;

      const finish = () => {
        if (finished) return;
        finished = true;
        resolve();
      };

      // The caller went away: stop the upstream exchange (ends blocking queries and streams).
      res.once('close', () => {
        current?.destroy();
        finish();
      });

      req.on('data', (chunk: Buffer) => {
        if (replayable) {
          kept += chunk.length;
          if (kept > this.maxReplayBytes) {
            replayable = false;
            chunks.length = 0;
          } else chunks.push(chunk);
        }
        current?.write(chunk);
      });
      req.once('end', () => {
        bodyDone = true;
        current?.end();
      });
      req.once('error', () => current?.destroy());

      const fail = () => {
        if (res.headersSent) {
          res.destroy();
          return finish();
        }
        const detail = attempts.map((a) => `${a.server}: ${a.error}`).join('; ');
        const text = `no server reachable from ${who} (${detail || 'no servers configured'})`;
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        finish();
      };

      /** Every server failed: another may be named when nothing reached the last one. */
      const exhausted = (lastUnsent: boolean) => {
        if (!call.whenUnreachable || !lastUnsent || !replayable) return fail();
        // The body keeps arriving into `chunks` meanwhile; it is replayed whole to the next one.
        current = null;
        void call.whenUnreachable().then((next) => {
          if (finished) return;
          if (next === undefined) return fail();
          tryBase(this.base(next), exhausted);
        });
      };

      const tryServer = (i: number) => {
        const base = order[i];
        if (base === undefined) return fail();
        tryBase(base, (unsent) => (order[i + 1] === undefined ? exhausted(unsent) : tryServer(i + 1)));
      };

      /**
       * One attempt at `base`: `onFailed(unsent)` when it failed before an answer (unsent: before
       * any of the request reached it) and the body can be replayed; the 503 when it cannot.
       */
      const tryBase = (base: string, onFailed: (unsent: boolean) => void) => {
        if (finished) return;
        let sent = false;
        const url = new URL(req.url ?? '/', base);
        const headers = copyHeaders(req.headers, HOP_REQUEST_HEADERS);
        headers[this.markHeader] = '1';
        const out = (this.tls ? httpsRequest : httpRequest)(url, { method: req.method, headers, agent: this.agent });
        current = out;
        let timer: NodeJS.Timeout | null = null;
        out.once('socket', (socket) => {
          // A reused keep-alive socket is written at once: what it carried may have been read.
          if (!socket.connecting) {
            sent = true;
            return;
          }
          timer = setTimeout(() => out.destroy(new Error(`no connection within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
          socket.once('connect', () => {
            sent = true;
            if (timer) clearTimeout(timer);
          });
        });
        out.once('response', (up) => {
          if (timer) clearTimeout(timer);
          answered = true;
          const known = this.bases.indexOf(base);
          if (known >= 0) this.preferred = known;
          res.writeHead(up.statusCode ?? ErrorCatalogue.HTTP_FORWARD_FAILED.status, copyHeaders(up.headers, HOP_RESPONSE_HEADERS));
          // Streams (events, log follow) must show their first bytes at once.
          res.flushHeaders();
          up.pipe(res);
          up.once('end', finish);
          up.once('error', () => {
            res.destroy();
            finish();
          });
          up.once('aborted', () => {
            res.destroy();
            finish();
          });
        });
        out.once('error', (err) => {
          if (timer) clearTimeout(timer);
          if (finished || answered) {
            if (!finished) res.destroy();
            return finish();
          }
          attempts.push({ server: base, error: err.message });
          // A body we could not keep cannot be replayed to another server.
          if (!replayable) return fail();
          onFailed(!sent);
        });
        for (const c of chunks) out.write(c);
        if (bodyDone) out.end();
      };

      tryServer(0);
    });
  }

  /** Closes idle upstream connections. */
  close(): void {
    // The TLS agent belongs to the agent's OutboundTls, which closes it.
    if (!this.tls) this.agent.destroy();
  }
}
