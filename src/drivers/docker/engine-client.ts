/**
 * A thin typed client of the Docker Engine API over its unix socket (or tcp://), on node:http.
 * Only what the docker driver calls: JSON requests, streamed responses (image pull progress,
 * container logs) and hijacked connections (exec start). Errors carry the engine's HTTP status
 * and message so callers can tell "no such container" (404) from "conflict" (409).
 */
import { request as httpRequest, Agent, type IncomingMessage, type RequestOptions } from 'node:http';
import type { Socket } from 'node:net';

/** An error answer from the engine (status ≥ 400) or a transport failure (status 0). */
export class EngineError extends Error {
  constructor(
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EngineError';
  }
}

/** Where the engine listens: `unix:///var/run/docker.sock` or `tcp://host:port`. */
export interface EngineEndpoint {
  socketPath?: string;
  host?: string;
  port?: number;
}

/** Parses Nomad's `endpoint` setting. */
export function parseEndpoint(endpoint: string): EngineEndpoint {
  if (endpoint.startsWith('unix://')) return { socketPath: endpoint.slice('unix://'.length) };
  const m = /^(?:tcp|http):\/\/([^:/]+):(\d+)\/?$/.exec(endpoint);
  if (m) return { host: m[1]!, port: Number(m[2]) };
  throw new Error(`endpoint ${JSON.stringify(endpoint)} must be unix:///path or tcp://host:port`);
}

type Query = Record<string, string | number | boolean | undefined>;

function pathWithQuery(path: string, query?: Query): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** Options of one request. */
export interface EngineRequest {
  method: string;
  path: string;
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** Abort (and fail) the request after this many ms without completion. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The Docker Engine API client. One per driver; connections are kept alive. */
export class EngineClient {
  private readonly agent = new Agent({ keepAlive: true });

  constructor(readonly endpoint: EngineEndpoint) {}

  private options(req: EngineRequest, extraHeaders: Record<string, string>): RequestOptions {
    const headers: Record<string, string> = { ...extraHeaders, ...req.headers };
    return {
      method: req.method,
      path: pathWithQuery(req.path, req.query),
      headers,
      ...(this.endpoint.socketPath ? { socketPath: this.endpoint.socketPath } : { host: this.endpoint.host, port: this.endpoint.port }),
    };
  }

  private bodyOf(req: EngineRequest): { data?: Buffer; headers: Record<string, string> } {
    if (req.body === undefined) return { headers: {} };
    if (Buffer.isBuffer(req.body)) return { data: req.body, headers: { 'Content-Type': 'application/x-tar', 'Content-Length': String(req.body.length) } };
    const data = Buffer.from(JSON.stringify(req.body));
    return { data, headers: { 'Content-Type': 'application/json', 'Content-Length': String(data.length) } };
  }

  /** Sends a request and resolves the response once its headers arrived; ≥ 400 rejects with EngineError. */
  stream(req: EngineRequest): Promise<IncomingMessage> {
    const { data, headers } = this.bodyOf(req);
    return new Promise((resolve, reject) => {
      const r = httpRequest({ ...this.options(req, headers), agent: this.agent, signal: req.signal }, (res) => {
        if ((res.statusCode ?? 500) < 400) return resolve(res);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => reject(new EngineError(res.statusCode ?? 500, engineMessage(Buffer.concat(chunks).toString('utf8')))));
        res.on('error', (err) => reject(new EngineError(res.statusCode ?? 500, err.message, { cause: err })));
      });
      if (req.timeoutMs !== undefined) {
        r.setTimeout(req.timeoutMs, () => r.destroy(new Error(`${req.method} ${req.path} timed out after ${req.timeoutMs} ms`)));
      }
      r.on('error', (err) => reject(err instanceof EngineError ? err : new EngineError(0, `docker engine ${describe(this.endpoint)}: ${err.message}`, { cause: err })));
      r.end(data);
    });
  }

  /** A request whose JSON answer (or nothing, for 204) is returned. */
  async json<T>(req: EngineRequest): Promise<T> {
    const res = await this.stream(req);
    const text = await readAll(res);
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      return text as T;
    }
  }

  /**
   * Hijacks the connection (exec start, attach): resolves the raw socket once the engine
   * answered 101 (or 200, on engines that do not upgrade) — bytes after the headers belong to
   * the stream and are pushed back onto the socket.
   */
  hijack(req: EngineRequest): Promise<Socket> {
    const { data, headers } = this.bodyOf(req);
    return new Promise((resolve, reject) => {
      // No keep-alive agent: the socket becomes the stream and is never returned to a pool.
      const r = httpRequest(this.options(req, { ...headers, Connection: 'Upgrade', Upgrade: 'tcp' }));
      r.on('upgrade', (_res, socket: Socket, head: Buffer) => {
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
      });
      r.on('response', (res) => {
        if ((res.statusCode ?? 500) >= 400) {
          void readAll(res).then((t) => reject(new EngineError(res.statusCode ?? 500, engineMessage(t))));
          return;
        }
        resolve(res.socket as Socket);
      });
      r.on('error', (err) => reject(new EngineError(0, `docker engine ${describe(this.endpoint)}: ${err.message}`, { cause: err })));
      r.end(data);
    });
  }

  /** Frees the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}

function describe(e: EngineEndpoint): string {
  return e.socketPath ? `unix://${e.socketPath}` : `tcp://${e.host}:${e.port}`;
}

/** The engine's `{"message": "…"}` error body, or the text as is. */
function engineMessage(text: string): string {
  try {
    const m = (JSON.parse(text) as { message?: unknown }).message;
    if (typeof m === 'string') return m;
  } catch {
    // not JSON
  }
  return text.trim();
}

/** Reads a whole response body as UTF-8. */
export function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** Whether an error is the engine saying "not found". */
export function isNotFound(err: unknown): boolean {
  return err instanceof EngineError && err.status === 404;
}
