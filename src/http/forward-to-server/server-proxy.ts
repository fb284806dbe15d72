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
    this.bases = opts.servers.map((s) => withScheme(/^https?:\/\//.test(s) ? s.replace(/\/+$/, '') : `http://${s}`, opts.tls !== undefined));
    this.agent = opts.tls ? opts.tls.serverAgent : new HttpAgent({ keepAlive: true, maxSockets: Infinity });
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    this.maxReplayBytes = opts.maxReplayBytes ?? 16 * 1024 * 1024;
  }

  /** The server base URLs, preferred first. */
  servers(): string[] {
    return [...this.bases.slice(this.preferred), ...this.bases.slice(0, this.preferred)];
  }

  /**
   * Proxies `req` (whose body has not been read) and writes the answer into `res`. Resolves
   * when the exchange is over: answered, failed with a 503, or abandoned by the caller.
   */
  proxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      let replayable = true;
      let bodyDone = false;
      let current: ClientRequest | null = null;
      let answered = false;
      let finished = false;
      const attempts: Attempt[] = [];
      const order = this.servers();

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
        const text = `no server reachable from ${this.who} (${detail || 'no servers configured'})`;
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
        res.end(text);
        finish();
      };

      const tryServer = (i: number) => {
        if (finished) return;
        const base = order[i];
        if (base === undefined) return fail();
        const url = new URL(req.url ?? '/', base);
        const headers = copyHeaders(req.headers, HOP_REQUEST_HEADERS);
        headers[this.markHeader] = '1';
        const out = (this.tls ? httpsRequest : httpRequest)(url, { method: req.method, headers, agent: this.agent });
        current = out;
        let timer: NodeJS.Timeout | null = null;
        out.once('socket', (socket) => {
          if (!socket.connecting) return;
          timer = setTimeout(() => out.destroy(new Error(`no connection within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
          socket.once('connect', () => {
            if (timer) clearTimeout(timer);
          });
        });
        out.once('response', (up) => {
          if (timer) clearTimeout(timer);
          answered = true;
          this.preferred = this.bases.indexOf(base);
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
          tryServer(i + 1);
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
